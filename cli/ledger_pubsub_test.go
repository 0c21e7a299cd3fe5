package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/records"
)

// --ledger_topic publishes the ledger's records, typed, beside its files: the messages are
// the records of ledger.binpb, byte for byte.
func TestLedgerTopic(t *testing.T) {
	srv, ring, lines := demoPubSub(t)
	const topic = "projects/p/topics/ledger"
	if _, err := srv.GServer.CreateTopic(context.Background(), &pubsubpb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in, prices, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "prices.json"), filepath.Join(dir, "out")
	os.WriteFile(in, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644)
	os.WriteFile(prices, []byte(`{"models":{"support-scripted-1":{"input":1,"output":2}}}`), 0o644)
	t.Cleanup(func() {
		for _, f := range []string{"agent", "keyring", "input", "output_dir", "prices", "ledger_topic"} {
			flag.Set(f, flag.Lookup(f).DefValue)
		}
	})
	if code, stdout, stderr := runCLI(t, "", "run", "--agent", support.Name, "--keyring", "file:"+ring, "--input", in, "--output_dir", out,
		"--prices", prices, "--ledger_topic", topic); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	path := filepath.Join(out, pipeline.LedgerName+".binpb")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := records.Records(path, data, pipeline.LedgerType)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for _, m := range srv.Messages() {
		if m.Topic != topic {
			continue
		}
		if m.Attributes[wire.AttrType] != string(pipeline.LedgerType) || m.Attributes[wire.AttrContentType] != wire.ContentTypeProto {
			t.Errorf("message attributes %v", m.Attributes)
		}
		got = append(got, m.Data)
	}
	slices.SortFunc(got, bytes.Compare)
	slices.SortFunc(want, bytes.Compare)
	if len(want) == 0 || !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("%d messages on %s; ledger.binpb holds %d records", len(got), topic, len(want))
	}
}
