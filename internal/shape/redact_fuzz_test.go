package shape

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"
)

// slowRedaction reports whether redacting takes longer than a second twice in a row: a
// quadratic path is slow every time, a pause of a busy machine (a fuzz worker per core) once.
func slowRedaction(run func()) (time.Duration, bool) {
	var took time.Duration
	for range 2 {
		start := time.Now()
		run()
		if took = time.Since(start); took <= time.Second {
			return took, false
		}
	}
	return took, true
}

// FuzzRedactorRemovesPlantedSecrets plants a secret value in arbitrary text, as it is, inside
// JSON and URL-encoded, and checks that it never survives, that redacting again changes nothing
// more, that the output stays bounded, and that a JSON answer stays JSON.
func FuzzRedactorRemovesPlantedSecrets(f *testing.F) {
	for _, c := range canaries {
		f.Add(c.text, "s3cretV4lue", uint16(len(c.text)/2))
	}
	for _, s := range lookAlikes {
		f.Add(s, "postgres://app:pw@db/app", uint16(0))
	}
	f.Add("Cookie: sid=abc; x=y", "Cookie: sid", uint16(3))
	f.Add("UPDATE u SET pw = 'a''b' WHERE id = 1", "hunter2", uint16(20))
	f.Add("%41%42", "ABCDEF", uint16(1))
	f.Add("%0", "X00\"00", uint16(32)) // found: a secret JSON writes escaped was not looked for
	f.Fuzz(func(t *testing.T, text, secret string, at uint16) {
		if len(secret) < minSecretValue || strings.ContainsAny(secret, "[]") {
			// Shorter values are not scrubbed (too common); a value spelled with the marker's
			// brackets can be remade by the marker itself.
			t.Skip()
		}
		r := NewRedactor(RedactorOptions{SecretValues: []string{secret}})
		i := int(at) % (len(text) + 1)
		planted := text[:i] + secret + text[i:]

		var out string
		if took, slow := slowRedaction(func() { out = r.String(planted) }); slow {
			t.Fatalf("String of %d bytes took %v", len(planted), took)
		}
		if strings.Contains(out, secret) {
			t.Fatalf("String(%q) = %q: the secret survived", planted, out)
		}
		if len(out) > 10*len(planted)+len(Redacted) {
			t.Fatalf("String grew %d bytes to %d", len(planted), len(out))
		}
		if again := r.String(out); strings.Contains(again, secret) {
			t.Fatalf("redacting %q again gave the secret back: %q", out, again)
		}

		encoded := "https://example.com/cb?q=" + url.QueryEscape(planted) + "&page=2"
		if got := r.String(encoded); strings.Contains(got, secret) || strings.Contains(got, url.QueryEscape(secret)) {
			t.Fatalf("String(%q) = %q: the URL-encoded secret survived", encoded, got)
		}

		raw, err := json.Marshal(map[string]any{"summary": planted, "attributes": map[string]string{"db.query.text": planted}})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := r.JSON(raw)
		if err != nil {
			t.Fatalf("JSON(%s): %v", raw, err)
		}
		var back struct {
			Summary    string            `json:"summary"`
			Attributes map[string]string `json:"attributes"`
		}
		if err := json.Unmarshal(doc, &back); err != nil {
			t.Fatalf("JSON(%s) = %s, not JSON: %v", raw, doc, err)
		}
		if strings.Contains(back.Summary, secret) || strings.Contains(back.Attributes["db.query.text"], secret) {
			t.Fatalf("JSON(%s) = %s: the secret survived", raw, doc)
		}
	})
}
