package aspire

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// transport is the HTTP transport of a dashboard client: bounded dialling and, for an https
// dashboard on loopback, the ASP.NET development certificates trusted beside the system's.
func transport(o Options) *http.Transport {
	t := &http.Transport{
		Proxy:                 nil, // a dashboard is local or named directly; no proxy sees the key
		DialContext:           (&net.Dialer{Timeout: dialTimeout}).DialContext,
		TLSHandshakeTimeout:   dialTimeout,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
	}
	if pool := devCertPool(o); pool != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return t
}

// Limits of reading the development certificate folders: they hold a handful of small files.
const (
	maxCertFiles = 32
	maxCertBytes = 64 << 10
)

// devCertPool is the system pool plus the PEM certificates of the ASP.NET development
// certificate folders, when some endpoint is https on a loopback host; nil otherwise (the
// system pool alone). `dotnet dev-certs https --trust` writes the trusted copy on Linux to
// ~/.aspnet/dev-certs/trust; `dotnet dev-certs https --export-path ~/.aspnet/https/…
// --format pem` is the usual exported copy. Only loopback endpoints trust them: the
// development certificate names localhost and proves nothing about another host.
func devCertPool(o Options) *x509.CertPool {
	if !o.TrustDevCerts || !anyLoopbackHTTPS(o.Endpoint, o.Fallback) {
		return nil
	}
	dirs := o.DevCertDirs
	if dirs == nil {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		dirs = []string{filepath.Join(home, ".aspnet", "dev-certs", "trust"), filepath.Join(home, ".aspnet", "https")}
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	added, seen := false, 0
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := strings.ToLower(e.Name())
			if e.IsDir() || !(strings.HasSuffix(name, ".pem") || strings.HasSuffix(name, ".crt")) || strings.HasSuffix(name, ".key.pem") {
				continue
			}
			if seen++; seen > maxCertFiles {
				break
			}
			info, err := e.Info()
			if err != nil || info.Size() > maxCertBytes {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err == nil && pool.AppendCertsFromPEM(data) {
				added = true
			}
		}
	}
	if !added {
		return nil
	}
	return pool
}

func anyLoopbackHTTPS(endpoints ...string) bool {
	for _, raw := range endpoints {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" {
			continue
		}
		h := u.Hostname()
		if strings.EqualFold(h, "localhost") {
			return true
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			return true
		}
	}
	return false
}
