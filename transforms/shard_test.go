package transforms_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/agent/shard"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/scenario"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
)

// shardedSupport is the support agent spread over sub-keys: its config is the support
// agent's plus "shards".
const shardedSupport = "support-sharded"

func init() {
	agent.Register(shardedSupport, func(config []byte) (*agent.Agent, error) {
		var cfg struct {
			Script string `json:"script"`
			Shards int    `json:"shards"`
		}
		if err := json.Unmarshal(config, &cfg); err != nil {
			return nil, err
		}
		script := support.ModelScript
		if cfg.Script != "" {
			b, err := os.ReadFile(cfg.Script)
			if err != nil {
				return nil, err
			}
			script = b
		}
		def, err := support.Definition(script)
		if err != nil {
			return nil, err
		}
		def.Name, def.Shards = shardedSupport, cfg.Shards
		return bindings.New(def)
	})
}

// shardedConfig writes a model script answering by what each call asks (a lookup for "where
// is", a memory write for "remember", the shipped order for its tool result, else a
// reply) and returns the sharded agent's config.
func shardedConfig(t testing.TB, shards int) []byte {
	t.Helper()
	s, err := support.Schema()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, r := range []struct{ last, value string }{
		{"shipped", reply("your order shipped")}, {"where is", lookup("A-1")},
		{"remember", remember("tone", "brief")}, {"", reply("hello")},
	} {
		doc := fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":%s}`+"\n", interaction.ValueFormat, s.RootTypeID(), s.Digest(), r.value)
		if r.last == "" {
			fmt.Fprintf(&b, "{\"response_text\":%q}\n", doc)
		} else {
			fmt.Fprintf(&b, "{\"last\":%q,\"response_text\":%q}\n", r.last, doc)
		}
	}
	p := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return []byte(fmt.Sprintf(`{"script":%q,"shards":%d}`, p, shards))
}

// hotEvents are n external events of one key, a second apart: mostly chat, every fifth a
// lookup (a tool call, which suspends its sub-key), every seventh a memory write (refused).
func hotEvents(key string, n int) []*pb.AgentEnvelope {
	var envs []*pb.AgentEnvelope
	for i := range n {
		text := fmt.Sprintf("%s: message %d", key, i)
		switch {
		case i%5 == 2:
			text = fmt.Sprintf("%s: where is order %d?", key, i)
		case i%7 == 3:
			text = fmt.Sprintf("%s: please remember %d", key, i)
		}
		envs = append(envs, ext(key, t0+int64(i)*1000, text))
	}
	return envs
}

// TestShardedAgent runs one hot key of a sharded agent through the driver, RunAgent on Prism
// (as it comes and with its steps run apart) and the fast path, and requires the same bytes:
// its events spread over sub-keys, its tool calls resumed by results sent back to their
// sub-keys, its memory writes refused as shard_refused.
func TestShardedAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Prism pipeline")
	}
	config := shardedConfig(t, 4)
	ref, kr := keyringRef(t)
	a, err := agent.Build(shardedSupport, config)
	if err != nil {
		t.Fatal(err)
	}
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 250}}
	events := hotEvents("hot-1", 40)
	// The results answer the intents the driver emits; a few rounds settle them, since an
	// answered call lets the calls queued behind it run earlier.
	set := &scenario.Set{Records: envelopes(events...)}
	for range 3 {
		set = &scenario.Set{Records: envelopes(append(events, shippedResults(t, driveSet(t, d, set)[pipeline.IntentsName])...)...)}
	}
	want := driveSet(t, d, set)
	stats := compareExecutions(t, shardedSupport, config, ref, d, set, nil)
	t.Logf("%d records; outputs: %v; dead letters: %v", stats.records, stats.outputs, stats.reasons)

	shards := map[string]bool{}
	shipped := 0
	for _, b := range want[pipeline.FinalsName] {
		f := &pb.FinalReply{}
		if err := proto.Unmarshal(b, f); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := shard.Split(f.GetEntityKey(), 4); !ok {
			t.Errorf("a final of %q, not a sub-key of hot-1", f.GetEntityKey())
		}
		shards[string(f.GetEntityKey())] = true
		if strings.Contains(f.GetMessage(), "shipped") {
			shipped++
		}
	}
	if len(shards) < 2 || shipped == 0 || stats.reasons[string(records.ReasonShardRefused)] == 0 {
		t.Errorf("finals on %d sub-keys, %d resumed by their results, %d shard_refused: the run lost its coverage",
			len(shards), shipped, stats.reasons[string(records.ReasonShardRefused)])
	}
}

// shippedResults answers each intent (once, whatever its attempts) with a shipped order, sent
// to the intent's own key half a second after it was made.
func shippedResults(t *testing.T, intents [][]byte) []*pb.AgentEnvelope {
	seen := map[string]bool{}
	var out []*pb.AgentEnvelope
	for _, b := range intents {
		ti := &pb.ToolIntent{}
		if err := proto.Unmarshal(b, ti); err != nil {
			t.Fatal(err)
		}
		if seen[ti.GetIntentId()] {
			continue
		}
		seen[ti.GetIntentId()] = true
		out = append(out, &pb.AgentEnvelope{EntityKey: ti.GetEntityKey(), EventTimeMs: ti.GetCreatedAtMs() + 500,
			Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: ti.GetIntentId(), EntityKey: ti.GetEntityKey(),
				Seq: ti.GetSeq(), Status: pb.ToolResult_OK, Payload: []byte(`{"status":"shipped"}`)}}})
	}
	return out
}
