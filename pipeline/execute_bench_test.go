package pipeline_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"

	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

// BenchmarkPortablePath runs the same pipeline (2,000 greetings over 1,000 keys, the
// "support-any" agent) on Prism in process and through a Prism job service over the Job API
// with LOOPBACK workers: the cost of the portable path itself.
func BenchmarkPortablePath(b *testing.B) {
	dir := b.TempDir()
	in := filepath.Join(dir, "in.binpb")
	writeLargeInput(b, in, transforms.Binary, 2000)
	endpoint, _ := jobServer(b)
	for _, bc := range []struct {
		name, runner, endpoint string
	}{
		{"prism_in_process", "prism", ""},
		{"job_service", "universal", endpoint},
	} {
		b.Run(bc.name, func(b *testing.B) {
			old, oldEnv := *jobopts.Endpoint, *jobopts.EnvironmentType
			*jobopts.Endpoint, *jobopts.EnvironmentType = bc.endpoint, "LOOPBACK"
			defer func() { *jobopts.Endpoint, *jobopts.EnvironmentType = old, oldEnv }()
			for b.Loop() {
				if _, err := pipeline.Run(context.Background(), bc.runner, pipeline.Options{
					Options: transforms.Options{Agent: "support-any"},
					Input:   in, OutputDir: filepath.Join(b.TempDir(), "out"), Shards: 2,
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
