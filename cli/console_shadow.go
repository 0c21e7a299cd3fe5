package cli

import (
	"path/filepath"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
)

// shadowSource gives the console's shadow page the comparisons a shadow agent's run wrote
// under the output folders (shadow_divergences.binpb, or its shards), read anew for each
// view; nil without output folders.
func shadowSource(dirs []string) console.ShadowSource {
	if len(dirs) == 0 {
		return nil
	}
	return func() ([]*pb.ShadowComparison, error) {
		var files []string
		for _, d := range dirs {
			m, err := filepath.Glob(filepath.Join(d, pipeline.ShadowDivergencesName+"*.binpb"))
			if err != nil {
				return nil, err
			}
			files = append(files, m...)
		}
		return records.ReadMessages(files, func() *pb.ShadowComparison { return &pb.ShadowComparison{} })
	}
}
