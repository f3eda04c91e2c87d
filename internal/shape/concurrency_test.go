package shape

import (
	"strings"
	"sync"
	"testing"
)

func TestRedactorAndCodecAreSafeForConcurrentUse(t *testing.T) {
	r := NewRedactor(RedactorOptions{SecretValues: []string{"plainOpaqueValue"}})
	c := NewCodec(nil)
	doc := []byte(`{"attributes":{"db.password":"p"},"message":"Bearer abcDEF123ghiJKL456mnoPQR plainOpaqueValue"}`)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				out, err := r.JSON(doc)
				if err != nil || strings.Contains(string(out), "abcDEF") || strings.Contains(string(out), "plainOpaque") {
					errs <- "JSON leaked or failed: " + string(out)
					return
				}
				cur, err := c.Encode("list_runs", map[string]int{"g": g}, "fp", i)
				if err != nil {
					errs <- err.Error()
					return
				}
				if off, err := c.Decode(cur, "list_runs", map[string]int{"g": g}, "fp"); err != nil || off != i {
					errs <- "cursor round trip failed"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
