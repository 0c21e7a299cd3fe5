package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/devloop"
	"github.com/beamagents/beamagents/internal/testkit/testsvc"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
)

// remembererAgent keeps a tone in long-term memory: "remember X" stores X, "recall" replies
// with what is stored.
const remembererAgent = "test-rememberer"

func init() {
	agent.Register(remembererAgent, func([]byte) (*agent.Agent, error) {
		return agent.New(agent.Definition{Name: remembererAgent, Handler: func(hc *agent.Context, tr agent.Trigger) error {
			if tone, ok := strings.CutPrefix(string(tr.Event), "remember "); ok {
				if err := hc.Remember("prefs", "tone", []byte(tone)); err != nil {
					return err
				}
				return hc.Reply("noted " + tone)
			}
			tone, found, err := hc.Recall("prefs", "tone")
			switch {
			case err != nil:
				return err
			case !found:
				return hc.Reply("tone: none")
			}
			return hc.Reply("tone: " + string(tone))
		}})
	})
}

// writeEvents writes one JSON Lines envelope file of external events, key then text, a
// millisecond apart.
func writeEvents(t *testing.T, path string, keyText ...string) string {
	t.Helper()
	var in bytes.Buffer
	for i := 0; i < len(keyText); i += 2 {
		env := &pb.AgentEnvelope{EntityKey: []byte(keyText[i]), EventTimeMs: 1767225600000 + int64(i),
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(keyText[i+1])}}
		line, err := protojson.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		json.Compact(&in, line)
		in.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// finalTexts are the final replies of a run's output folder, as "key: message", sorted.
func finalTexts(t *testing.T, dir string) []string {
	t.Helper()
	finals, err := records.ReadMessages([]string{filepath.Join(dir, pipeline.FinalsName+".binpb")}, func() *pb.FinalReply { return &pb.FinalReply{} })
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range finals {
		out = append(out, fmt.Sprintf("%s: %s", f.GetEntityKey(), f.GetMessage()))
	}
	slices.Sort(out)
	return out
}

func resetMemoryStoreFlag(t *testing.T) {
	t.Cleanup(func() { flag.Set("memory_store", flag.Lookup("memory_store").DefValue) })
}

// A run with --memory_store remembers; a second run on the same store (the batch path, on
// other input) recalls what the first wrote.
func TestRunMemoryStoreAcrossRuns(t *testing.T) {
	defineRunFlags()
	resetMemoryStoreFlag(t)
	dir := t.TempDir()
	t.Setenv("BEAMAGENTS_TEST_MEMORY", "sqlite:"+filepath.Join(dir, "env", "memory.db"))
	for _, ref := range []string{"sqlite:" + filepath.Join(dir, "sqlite", "memory.db"), "env:BEAMAGENTS_TEST_MEMORY"} {
		kind, _, _ := strings.Cut(ref, ":")
		memoryRuns(t, filepath.Join(dir, kind), ref)
	}
}

// The same through a real redis-server.
func TestRunMemoryStoreRedis(t *testing.T) {
	defineRunFlags()
	resetMemoryStoreFlag(t)
	memoryRuns(t, t.TempDir(), "redis://"+testsvc.Redis(t)+"/0")
}

// memoryRuns runs the rememberer twice on store ref, under dir.
func memoryRuns(t *testing.T, dir, ref string) {
	t.Helper()
	first := writeEvents(t, filepath.Join(dir, "in1", "events.jsonl"), "ann", "remember formal", "bob", "recall", "ann", "recall")
	second := writeEvents(t, filepath.Join(dir, "in2", "events.jsonl"), "ann", "recall", "bob", "recall")
	for _, r := range []struct {
		input, out, mode string
		want             []string
	}{
		{first, "out1", "streaming", []string{"ann: noted formal", "ann: tone: formal", "bob: tone: none"}},
		{second, "out2", "batch", []string{"ann: tone: formal", "bob: tone: none"}},
	} {
		out := filepath.Join(dir, r.out)
		code, stdout, stderr := runCLI(t, "", "run", "--agent", remembererAgent, "--allow_unsigned_intents", "--input", r.input, "--output_dir", out,
			"--mode", r.mode, "--memory_store", ref)
		if code != 0 {
			t.Fatalf("%s run on %s: exit %d\n%s\n%s", r.mode, ref, code, stdout, stderr)
		}
		if got := finalTexts(t, out); !slices.Equal(got, r.want) {
			t.Errorf("%s run on %s: replies %q, want %q\n%s", r.mode, ref, got, r.want, stderr)
		}
	}
}

// A reference run cannot use is refused at launch: exit 2, one line naming the flag, never
// quoting what may be a password.
func TestRunMemoryStoreRefused(t *testing.T) {
	defineRunFlags()
	resetMemoryStoreFlag(t)
	dir := t.TempDir()
	input := writeEvents(t, filepath.Join(dir, "in", "events.jsonl"), "ann", "recall")
	t.Setenv("BEAMAGENTS_TEST_NOT_A_STORE", "hunter2-password")
	for _, ref := range []string{"hunter2-password", "redis:hunter2-password@host", "sqlite:", "sqlite:/tmp/m.db?mode=ro",
		"bigtable:projects/p", "env:BEAMAGENTS_TEST_NOT_A_STORE", "env:BEAMAGENTS_TEST_UNSET", "gcpsm:projects/p"} {
		code, _, stderr := runCLI(t, "", "run", "--agent", remembererAgent, "--allow_unsigned_intents", "--input", input, "--output_dir", filepath.Join(dir, "out"),
			"--memory_store", ref)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "--memory_store") || strings.Contains(stderr, "hunter2") {
			t.Errorf("--memory_store %q: exit %d, stderr %q; want exit 2 and one line naming the flag", ref, code, stderr)
		}
	}
}

// replay has no store: a Recall or Remember outside a journal it resumes fails as
// memory_store_failed, and the key is reported as diverging from the recorded run.
func TestReplayWithoutMemoryStore(t *testing.T) {
	defineRunFlags()
	resetMemoryStoreFlag(t)
	dir := t.TempDir()
	input := writeEvents(t, filepath.Join(dir, "in", "events.jsonl"), "ann", "remember formal", "ann", "recall")
	export := `{"entityKey":"YW5u","eventTimeMs":"1767229000000","exportRequest":{"requestId":"after"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "in", "exports.jsonl"), []byte(export), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := filepath.Join(filepath.Dir(input), "*.jsonl")
	recorded := filepath.Join(dir, "recorded")
	code, out, errOut := runCLI(t, "", "run", "--agent", remembererAgent, "--allow_unsigned_intents", "--input", inputs,
		"--output_dir", recorded, "--memory_store", "sqlite:"+filepath.Join(dir, "memory.db"))
	if code != 0 {
		t.Fatalf("recorded run: exit %d\n%s\n%s", code, out, errOut)
	}
	replayed := filepath.Join(dir, "replayed")
	code, out, errOut = runCLI(t, "", "replay", "--agent", remembererAgent, "--cache_from", filepath.Join(recorded, pipeline.SnapshotsName+".binpb"),
		"--input", inputs, "--output_dir", replayed, "--recorded", recorded)
	if code != exitDiverged || !strings.Contains(out, `key "ann"`) {
		t.Fatalf("replay: exit %d, want %d and key ann diverging\n%s\n%s", code, exitDiverged, out, errOut)
	}
	dead, err := readDeadLetters(filepath.Join(replayed, pipeline.DeadLettersName+".binpb"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != 2 || dead[0].GetReason() != string(records.ReasonMemoryStoreFailed) {
		t.Fatalf("replay's dead letters: %v, want the two activations as memory_store_failed", dead)
	}
}

// dev without --memory_store keeps long-term memory in its state directory: what the agent
// remembered before a restart, it recalls after.
func TestDevMemoryStoreDefault(t *testing.T) {
	beam.Init()
	dir := t.TempDir()
	// The second loop's console lists what the first remembered on ann's entity page.
	page := make(chan string, 1)
	for i, tc := range []struct{ event, want string }{
		{"remember formal", "final reply  ann          noted formal"},
		{"recall", "final reply  ann          tone: formal"},
	} {
		s := &runSettings{}
		s.Agent, s.AllowUnsignedIntents = remembererAgent, true
		if err := devDefaults(s, dir); err != nil {
			t.Fatal(err)
		}
		if err := s.finish(); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code := serveDev(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}, devloop.Config{Options: s.Options, StateDir: dir,
			Listen: "127.0.0.1:0", User: "dev", Password: "pw", Until: map[string]bool{"ann": true}, Ready: func(url, user, password string) {
				if i == 1 {
					page <- getAs(strings.TrimSuffix(url, "/")+console.KeyPath([]byte("ann")), user, password)
				}
			},
			Events: []*pb.AgentEnvelope{{EntityKey: []byte("ann"), Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(tc.event)}}}}, 2*time.Minute)
		if code != 0 || !strings.Contains(out.String(), tc.want) {
			t.Fatalf("dev on %q: exit %d, want %q\n%s\n%s", tc.event, code, tc.want, out.String(), errOut.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "memory.db")); err != nil {
		t.Fatal(err)
	}
	if got := <-page; !strings.Contains(got, `data-namespace="prefs"`) || !strings.Contains(got, "formal") {
		t.Fatalf("ann's entity page in dev's console lists no long-term memory:\n%.2000s", got)
	}
}

// getAs is the body of a page fetched with basic-auth credentials (any status).
func getAs(url, user, password string) string {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	req.SetBasicAuth(user, password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
