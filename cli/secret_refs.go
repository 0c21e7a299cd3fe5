package cli

import (
	"context"
	"fmt"

	"github.com/beamagents/beamagents/internal/secretref"
	"github.com/beamagents/beamagents/pipeline"
)

// checkSecretRefs reads the run's Secret Manager references (the keyring, the model's and its
// fallbacks' API keys, the memory store) before the job starts when the workers run in this
// process (Prism): a version that does not exist or may not be read then stops the run with
// one line naming it, and the workers find the secret in the process's cache. On other runners the workers
// read them at setup, with their own credentials, and a failure fails the job there.
func checkSecretRefs(e *env, runner string, o pipeline.Options) int {
	if runner != "prism" {
		return 0
	}
	refs := [][2]string{{"--keyring", o.Keyring}, {"--api_key", o.Model.APIKey}, {"--memory_store", o.MemoryStore}}
	for i, f := range o.Model.Fallback {
		refs = append(refs, [2]string{fmt.Sprintf("model fallback %d's api_key", i+1), f.APIKey})
	}
	for _, r := range refs {
		if !secretref.Is(r[1]) {
			continue
		}
		if _, err := secretref.Read(context.Background(), r[1]); err != nil {
			e.errorf("%s: %v", r[0], err)
			return 1
		}
	}
	return 0
}
