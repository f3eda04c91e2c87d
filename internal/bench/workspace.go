package bench

import (
	"fmt"
	"os"
	"path/filepath"
)

// smallCorpus is the project the benchmarks serve: three short documents, so list_docs measures
// the protocol path rather than the docs index.
var smallCorpus = map[string]string{
	"docs/deploy.md":  "# Deploying\n\nBuild, migrate and roll out a release.\n\n## Rollback\n\nRedeploy the previous tag.\n",
	"docs/retries.md": "# Retries and backoff\n\nHow outbound calls are retried.\n",
	"docs/jobs.md":    "# Jobs\n\nBackground jobs, schedules and failure handling.\n\n## Schedules\n\nCron syntax.\n",
}

// WriteProject lays the benchmark project out under dir.
func WriteProject(dir string) error {
	for name, body := range smallCorpus {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("create project: %w", err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return fmt.Errorf("create project: %w", err)
		}
	}
	return nil
}
