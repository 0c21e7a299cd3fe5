package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/cli"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/testsvc"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/ltm/backend"
	"github.com/beamagents/beamagents/records"
)

// asCLI makes this test binary run as beamagents (cli.Main, with the agents its tests
// register) instead of running tests: a test starts it as a child process it can SIGKILL.
const asCLI = "BEAMAGENTS_TEST_AS_CLI"

// mainIfChild runs cli.Main, which exits, when the binary was started as a child with asCLI.
func mainIfChild() {
	if os.Getenv(asCLI) == "1" {
		cli.Main()
	}
}

// flushAgent keeps flushNotes memory entries per key and flushes them to namespace
// flushNamespace when the key has been idle an hour; an event "tick" only moves time on.
const (
	flushAgent     = "test-kill-flush"
	flushNamespace = "notes"
	flushNotes     = 8
	flushTTL       = int64(3600_000)
)

func init() {
	agent.Register(flushAgent, func([]byte) (*agent.Agent, error) {
		return agent.New(agent.Definition{Name: flushAgent, FlushOnExpiry: flushNamespace, Limits: agent.Limits{IdleTTLMs: flushTTL},
			Handler: func(hc *agent.Context, tr agent.Trigger) error {
				if string(tr.Event) == "tick" {
					return hc.Reply("tick")
				}
				for i := range flushNotes {
					if err := hc.Put(fmt.Sprintf("note-%02d", i), fmt.Appendf(nil, "%s/%02d", tr.Event, i)); err != nil {
						return err
					}
				}
				return hc.Reply("noted")
			}})
	})
}

// A streaming run killed with SIGKILL while it flushes expiring keys to a Redis store loses
// no write the store acknowledged, and the restarted run completes the flush: the store ends
// with every key's memory at the seqs an uninterrupted run writes.
//
// Run 1 gives every key its notes and is drained into --state_dir. Run 2 restores them, and
// a tick hours later expires every key at once; when about a tenth of the keys have reached
// Redis, Redis is stopped (SIGSTOP), so the run is blocked inside its flush, and the run is
// killed (SIGKILL). What Redis holds then (read once it is continued) is every acknowledged
// write, and at most the writes that were in flight. Run 3 restores the last completed
// drain again (run 2's changes are lost, as documented), a later tick expires the keys, and
// the flush completes.
func TestKillMidFlushLosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the streaming pipeline three times")
	}
	const keys = 500
	ctx := context.Background()
	redisAddr := testsvc.Redis(t)
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() { rdb.Close() })
	redisPID := serverPID(t, rdb)
	t.Cleanup(func() { syscall.Kill(redisPID, syscall.SIGCONT) })
	store, err := backend.OpenRedis(ctx, backend.RedisOptions{URL: "redis://" + redisAddr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })

	ps, ring := flushPubSub(t)
	dir := t.TempDir()
	args := []string{"run", "--agent", flushAgent, "--input_subscription", flushSub, "--finals_topic", flushFinals,
		"--errors_topic", flushErrors, "--status_interval", "1s", "--state_dir", filepath.Join(dir, "state"),
		"--keyring", "file:" + ring, "--memory_store", "redis://" + redisAddr}
	env := []string{asCLI + "=1", "PUBSUB_EMULATOR_HOST=" + ps.Addr}

	const t0 = int64(1767225600000)
	var envelopes [][]byte
	publish := func(key, event string, at int64) []byte {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: at,
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(event)}})
		if err != nil {
			t.Fatal(err)
		}
		ps.Publish(flushIn, b, nil)
		return b
	}
	entities := make([]string, keys)
	for i := range entities {
		entities[i] = fmt.Sprintf("cust-%03d", i)
		envelopes = append(envelopes, publish(entities[i], "visit of "+entities[i], t0+int64(i)))
	}
	want := uninterruptedFlush(t, ring, entities, envelopes)
	if n := entryCount(want); n != keys*flushNotes {
		t.Fatalf("the uninterrupted run flushed %d entries, want %d", n, keys*flushNotes)
	}

	// Run 1: every key notes its visit; the drain writes the keys into --state_dir.
	run1 := startChild(t, env, args)
	awaitRun(t, run1, 60*time.Second, "every key's reply", func() bool { return topicCount(ps, flushFinals) == keys })
	out, errOut := run1.drain(t)
	if !strings.Contains(out, fmt.Sprintf("state of %d keys", keys)) || dbSize(t, rdb) != 0 {
		t.Fatalf("run 1 flushed before its drain or did not write its keys:\nstdout: %s\nstderr: %s", out, errOut)
	}

	// Run 2: restored, every key expires at the tick's watermark; killed mid-flush.
	run2 := startChild(t, env, args)
	publish("clock", "tick", t0+3*flushTTL)
	// Each entity that has entries holds three Redis keys: stop at about a tenth of them.
	for deadline := time.Now().Add(60 * time.Second); dbSize(t, rdb) < 3*keys/10; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) || run2.exited() {
			_, errOut := run2.output()
			t.Fatalf("run 2 flushed nothing:\n%s", errOut)
		}
	}
	if err := syscall.Kill(redisPID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	run2.kill(t)
	if err := syscall.Kill(redisPID, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	atKill := listFlushed(t, store, entities)
	if n := entryCount(atKill); n == 0 || n >= keys*flushNotes {
		t.Fatalf("the kill did not land mid-flush: %d of %d entries stored", n, keys*flushNotes)
	}
	t.Logf("at the kill the store held %d of %d entries", entryCount(atKill), keys*flushNotes)

	// Run 3: the last completed drain is restored again; a later tick completes the flush.
	run3 := startChild(t, env, args)
	publish("clock", "tick", t0+4*flushTTL)
	awaitRun(t, run3, 60*time.Second, "the whole flush", func() bool { return entryCount(listFlushed(t, store, entities)) == keys*flushNotes })
	_, errOut = run3.drain(t)
	if !strings.Contains(errOut, "did not finish its drain") {
		t.Errorf("run 3 did not say the killed run's drain is lost:\n%s", errOut)
	}

	final := listFlushed(t, store, entities)
	for _, e := range entities {
		if got, w := render(final[e]), render(want[e]); got != w {
			t.Errorf("%s: the store holds\n%s\nan uninterrupted run writes\n%s", e, got, w)
		}
		for _, acked := range atKill[e] {
			if !holds(final[e], acked) {
				t.Errorf("%s: %s = %q at seq %d, stored before the kill, is not in the final store", e, acked.Key, acked.Value, acked.Seq)
			}
		}
	}
	if n := topicCount(ps, flushErrors); n != 0 {
		t.Errorf("%d dead letters", n)
	}
}

// uninterruptedFlush runs the keys' envelopes on the in-memory driver, to the end of input
// (every expiry fired), with a SQLite store of its own, and returns what that store holds.
func uninterruptedFlush(t *testing.T, ring string, entities []string, envelopes [][]byte) map[string][]ltm.Entry {
	t.Helper()
	ctx := context.Background()
	a, err := agent.Build(flushAgent, nil)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := intent.LoadKeyring("file:" + ring)
	if err != nil {
		t.Fatal(err)
	}
	s, err := backend.OpenSQLite(ctx, filepath.Join(t.TempDir(), "uninterrupted.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr, LongTermMemory: s}, OrderResolutionMs: 250}}
	for i, e := range entities {
		_, canon, err := drive.DecodeEnvelope(records.Binary, envelopes[i])
		if err != nil {
			t.Fatal(err)
		}
		d.Run(ctx, []byte(e), [][]byte{canon}, func(kind int64, b []byte) {
			if kind == records.OutDeadLetter {
				t.Fatalf("%s: dead letter %x", e, b)
			}
		})
	}
	return listFlushed(t, s, entities)
}

// listFlushed reads the flush namespace of every entity.
func listFlushed(t *testing.T, s ltm.Store, entities []string) map[string][]ltm.Entry {
	t.Helper()
	got := map[string][]ltm.Entry{}
	for _, e := range entities {
		entries, err := s.List(context.Background(), []byte(e), flushNamespace, "", ltm.MaxListLimit)
		if err != nil {
			t.Fatal(err)
		}
		got[e] = entries
	}
	return got
}

func entryCount(m map[string][]ltm.Entry) int {
	n := 0
	for _, entries := range m {
		n += len(entries)
	}
	return n
}

// render lists entries one a line as key=value@seq.
func render(entries []ltm.Entry) string {
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "  %s=%q@%d\n", e.Key, e.Value, e.Seq)
	}
	return b.String()
}

// holds reports whether entries has e's key with e's value and seq.
func holds(entries []ltm.Entry, e ltm.Entry) bool {
	for _, x := range entries {
		if x.Key == e.Key {
			return x.Seq == e.Seq && bytes.Equal(x.Value, e.Value)
		}
	}
	return false
}

// serverPID is the process id of the Redis server c talks to (INFO server's process_id).
func serverPID(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "process_id:"); ok {
			pid, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("redis INFO has no process_id:\n%s", info)
	return 0
}

func dbSize(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	n, err := c.DBSize(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The topics and input subscription of the kill test's Pub/Sub server.
const (
	flushIn     = "projects/p/topics/in"
	flushSub    = "projects/p/subscriptions/in"
	flushFinals = "projects/p/topics/finals"
	flushErrors = "projects/p/topics/errors"
)

// flushPubSub serves a pstest server on a loopback port (a child process reaches it through
// PUBSUB_EMULATOR_HOST) with the kill test's topics, and writes a keyring.
func flushPubSub(t *testing.T) (*pstest.Server, string) {
	t.Helper()
	srv := pstest.NewServer()
	t.Cleanup(func() { srv.Close() })
	ctx := context.Background()
	for _, topic := range []string{flushIn, flushFinals, flushErrors} {
		if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: flushSub, Topic: flushIn, AckDeadlineSeconds: 10}); err != nil {
		t.Fatal(err)
	}
	ring := filepath.Join(t.TempDir(), "ring.json")
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32))
	if err := os.WriteFile(ring, []byte(`{"active":"k","keys":[{"id":"k","secret":"`+secret+`"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, ring
}

func topicCount(srv *pstest.Server, topic string) int {
	n := 0
	for _, m := range srv.Messages() {
		if m.Topic == topic {
			n++
		}
	}
	return n
}

// child is this test binary running as beamagents in a process of its own.
type child struct {
	cmd         *exec.Cmd
	out, errOut *testsvc.SyncBuffer
	done        chan struct{}
	err         error
}

func startChild(t *testing.T, env, args []string) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: exec.Command(exe, args...), out: &testsvc.SyncBuffer{}, errOut: &testsvc.SyncBuffer{}, done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.errOut
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.err = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		if !c.exited() {
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *child) output() (string, string) { return c.out.String(), c.errOut.String() }

// drain interrupts the run once it streams (a SIGTERM before it handles signals would kill
// it) and waits for it to exit 0.
func (c *child) drain(t *testing.T) (string, string) {
	t.Helper()
	awaitRun(t, c, 60*time.Second, "the run's start line", func() bool { return strings.Contains(c.errOut.String(), "streaming from") })
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the run did not drain within a minute:\n%s", c.errOut.String())
	}
	out, errOut := c.output()
	if c.err != nil {
		t.Fatalf("the run's drain: %v\nstdout: %s\nstderr: %s", c.err, out, errOut)
	}
	return out, errOut
}

// kill sends SIGKILL and waits for the process to end.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.done
}

// awaitRun polls cond until it holds; the run ending first, or the timeout, fails the test.
func awaitRun(t *testing.T, c *child, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(50 * time.Millisecond) {
		if c.exited() || time.Now().After(deadline) {
			out, errOut := c.output()
			t.Fatalf("waiting for %s: the run ended or %s passed (%v)\nstdout: %s\nstderr: %s", what, timeout, c.err, out, errOut)
		}
	}
}
