//go:build !linux

package compat

import "errors"

// loopbackUp is unsupported where private network namespaces are.
func loopbackUp() error { return errors.New("network namespaces are Linux only") }
