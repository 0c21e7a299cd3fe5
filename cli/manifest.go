package cli

import (
	"fmt"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register(&command{name: "manifest", summary: "print (or check) the --update manifest of the pipeline `run` builds", run: runManifest})
}

// runManifest prints the update manifest of the pipeline that `run` would build with the same
// flags, or with --check compares it against a pinned one (renames listed in --mapping, the
// JSON object Dataflow takes as --transform_name_mapping) and exits 1 on any difference.
func runManifest(e *env, args []string) int {
	fs := newFlags(e, "manifest", "manifest --agent NAME [--input GLOB] [--restore GLOB] [--shards N] [--window D] [--shadow_agent NAME] [--check FILE [--mapping FILE]]")
	o := pipeline.Options{OutputDir: "out"}
	fs.StringVar(&o.Agent, "agent", "", "registered agent")
	fs.StringVar(&o.Input, "input", "input/*.jsonl", "input glob (its format shapes the reading transforms)")
	format := fs.String("input_format", "", "json or binary (default: by file extension)")
	fs.StringVar(&o.Restore, "restore", "", "restore glob, as given to run")
	fs.IntVar(&o.Shards, "shards", 0, "as given to run")
	fs.DurationVar(&o.Window, "window", 0, "as given to run")
	conf := fs.String("agent_config", "", "file whose bytes configure the agent's factory")
	fs.StringVar(&o.Shadow.Agent, "shadow_agent", "", "a shadow agent, as given to run (its steps are additions to the manifest)")
	check := fs.String("check", "", "a manifest printed by an earlier version: exit 1 unless this one can update it")
	mappingFile := fs.String("mapping", "", "with --check: JSON object of transform renames, old name to new name")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if o.Agent == "" {
		fs.Usage()
		return 2
	}
	if code, ok := checkFlags(e, noArgs(fs),
		registered("agent", o.Agent, "agent", agent.Registered()),
		when(o.Shadow.Agent != "", registered("shadow_agent", o.Shadow.Agent, "agent", agent.Registered())),
		when(*format != "", oneOf("input_format", *format, string(transforms.JSON), string(transforms.Binary))),
		atLeast("shards", o.Shards, 0), atMost("shards", o.Shards, maxShards), nonNegative("window", o.Window),
		smallFile("agent_config", *conf, maxConfigBytes), smallFile("check", *check, maxConfigBytes), smallFile("mapping", *mappingFile, maxConfigBytes),
	); !ok {
		return code
	}
	o.InputFormat = transforms.Format(*format)
	if *conf != "" {
		b, err := records.ReadCapped(*conf, maxConfigBytes)
		if err != nil {
			e.errorf("%v", err)
			return 2
		}
		o.Config = b
	}
	beam.Init()
	m, err := pipeline.BuildManifest(o)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	if *check == "" {
		e.stdout.Write(m.MarshalIndent())
		return 0
	}
	return checkManifest(e, m, *check, *mappingFile)
}

func checkManifest(e *env, m *pipeline.Manifest, pinnedFile, mappingFile string) int {
	b, err := records.ReadCapped(pinnedFile, maxConfigBytes)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	pinned, err := pipeline.ParseManifest(b)
	if err != nil {
		e.errorf("%s: %v", pinnedFile, err)
		return 2
	}
	mapping := map[string]string{}
	if mappingFile != "" {
		b, err := records.ReadCapped(mappingFile, maxConfigBytes)
		if err == nil {
			err = jsontext.Decode(string(b), &mapping, jsontext.DecodeOptions{})
		}
		if err != nil {
			e.errorf("%s: %v", mappingFile, err)
			return 2
		}
	}
	diff := m.Diff(pinned, mapping)
	if len(diff) > 0 {
		fmt.Fprintf(e.stdout, "not update-compatible with %s (- running, + new):\n%s\n", pinnedFile, strings.Join(diff, "\n"))
		return 1
	}
	fmt.Fprintf(e.stdout, "update-compatible with %s\n", pinnedFile)
	return 0
}
