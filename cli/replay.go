package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/beamagents/beamagents/ledger"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/replay"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register(&command{name: "replay", summary: "re-run recorded traffic offline, answering the model only from recorded replay caches", run: runReplay})
}

// Exit code of a replay whose outputs diverge from the recorded ones.
const exitDiverged = 3

func runReplay(e *env, args []string) int {
	fs := newFlags(e, "replay", "replay --agent NAME --cache_from GLOB --input GLOB --output_dir DIR [--restore GLOB] [--recorded DIR] [--keyring REF] [--verify_results MODE] [--agent_config FILE]")
	name := fs.String("agent", "", "registered agent to run")
	conf := fs.String("agent_config", "", "file whose bytes configure the agent's factory")
	keyring := fs.String("keyring", "", "keyring reference for signing intents: env:VAR or file:PATH")
	verify := fs.String("verify_results", "", "verification of tool results and approvals against --keyring, as the recorded run's: off, permissive or require "+
		"(default require with --keyring, off without, as run)")
	cacheFrom := fs.String("cache_from", "", "StateSnapshot files taken after the recorded run, whose replay caches answer the model")
	input := fs.String("input", "", "the recorded envelope files: a glob of *.jsonl or length-delimited binary files")
	restore := fs.String("restore", "", "optional StateSnapshot files to restore first (the state the recorded run started from)")
	recorded := fs.String("recorded", "", "the recorded run's output directory (default: the directory of the first --cache_from file)")
	outDir := fs.String("output_dir", "", "directory for the replay's output files")
	replace := fs.Bool("replace", false, "replace the files an earlier run left in --output_dir")
	atEnd := fs.String("at_end", string(transforms.AtEndPark), "what the recorded run's --at_end was: park or fail")
	pricesPath := fs.String("prices", "", "the recorded run's --prices: the price table a tenant cost budget reserved its grants at")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *name == "" || *cacheFrom == "" || *input == "" || *outDir == "" {
		fs.Usage()
		return 2
	}
	ctx := context.Background()
	verifying := transforms.Options{Keyring: *keyring}
	var prices ledger.Table
	if code, ok := checkFlags(e, noArgs(fs),
		registered("agent", *name, "agent", agent.Registered()),
		oneOf("at_end", *atEnd, string(transforms.AtEndPark), string(transforms.AtEndFail)),
		when(*verify != "", verification("verify_results", *verify, func(m intent.Mode) { verifying.VerifyResults = &m })),
		smallFile("agent_config", *conf, maxConfigBytes),
		when(*pricesPath != "", readPrices("prices", *pricesPath, &prices)),
		keyringRef("keyring", *keyring, true),
		inputGlob(ctx, "cache_from", *cacheFrom, snapshotType),
		inputGlob(ctx, "input", *input, envelopeType),
		when(*restore != "", inputGlob(ctx, "restore", *restore, snapshotType)),
		outputDir(ctx, "output_dir", *outDir, *replace, runOutputs(),
			[2]string{"cache_from", *cacheFrom}, [2]string{"input", *input}, [2]string{"restore", *restore}, [2]string{"recorded", recordedGlob(*recorded)}),
	); !ok {
		return code
	}
	var config []byte
	if *conf != "" {
		var err error
		if config, err = records.ReadCapped(*conf, maxConfigBytes); err != nil {
			e.errorf("%v", err)
			return 2
		}
	}
	a, err := agent.Build(*name, config)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	deps, err := replayDeps(&verifying)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	cacheFiles, err := records.Glob(*cacheFrom)
	if err != nil {
		e.errorf("--cache_from: %v", err)
		return 1
	}
	snaps, err := records.ReadMessages(cacheFiles, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	if *recorded == "" {
		*recorded = filepath.Dir(cacheFiles[0])
	}
	rec, traces, err := replay.ReadRecorded(*recorded)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	inputs, dead, err := replay.ReadInputs(*input, *restore)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	m := replay.NewModel(snaps, traces)
	ending := replay.Ending{Park: *atEnd == string(transforms.AtEndPark), EndMs: replay.InputEnd(inputs), Prices: prices}
	keys, err := replay.RunWith(context.Background(), a, deps, m, inputs, rec, ending)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	if err := writeReplay(*outDir, keys, dead); err != nil {
		e.errorf("%v", err)
		return 1
	}
	diverged := 0
	for _, k := range keys {
		if k.Divergence != "" {
			diverged++
			fmt.Fprintf(e.stdout, "key %q: %s\n", k.Entity, k.Divergence)
		}
	}
	fmt.Fprintf(e.stdout, "replayed %d keys: %d model requests and %d inline tool runs answered from the recorded caches, %d cache misses, 0 provider calls; %d keys diverged from %s; outputs in %s\n",
		len(keys), m.Answered(), m.Inlined(), len(m.Misses()), diverged, *recorded, *outDir)
	if diverged > 0 {
		return exitDiverged
	}
	return 0
}

// recordedGlob is the files of a --recorded folder.
func recordedGlob(dir string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "*")
}

// writeReplay writes the replay's outputs as the pipeline's file sinks would.
func writeReplay(dir string, keys []replay.Key, dead [][]byte) error {
	byKind := map[int64][][]byte{records.OutDeadLetter: dead}
	for _, k := range keys {
		for _, o := range k.Outputs {
			byKind[o.Kind] = append(byKind[o.Kind], o.Bytes)
		}
	}
	for _, o := range records.Kinds() {
		if err := pipeline.WriteLocal(dir, o.Name, o.Type, byKind[o.Out]); err != nil {
			return err
		}
	}
	return nil
}

// replayDeps are the replay's signing and verification: the keyring, and the verification of
// results and approvals resolved as run resolves it (resultsMode), so a replay admits exactly
// the answers its recorded run admitted.
func replayDeps(o *transforms.Options) (host.Deps, error) {
	var deps host.Deps
	if err := resultsMode(o); err != nil {
		return deps, err
	}
	if o.Keyring == "" {
		return deps, nil
	}
	kr, err := intent.LoadKeyring(o.Keyring)
	if err != nil {
		return deps, err
	}
	deps.Keyring = kr
	if m := o.VerifyResults; m != nil && *m != intent.ModeOff {
		deps.VerifyResults = m
	}
	return deps, nil
}
