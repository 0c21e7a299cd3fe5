package cli_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
)

// smallDisk mounts a tmpfs of one page (4 KiB) for the test: a disk that fills up. Outside
// CI a machine that may not mount skips the test; under CI (CI=true, root) it must mount.
func smallDisk(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4k"); err != nil {
		if (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES)) && os.Getenv("CI") != "true" {
			t.Skipf("mounting a tmpfs is not permitted here (%v): the full-disk test needs root or CAP_SYS_ADMIN", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// leftovers lists the files under dir: on a full disk a failed command leaves none, neither
// under a final name nor a temporary one.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	return names
}

// On a full disk, run (both modes) and the effector fail, and leave no file cut short under
// a final name: every output is written under a temporary name and renamed when complete,
// and a failed run removes what it renamed.
func TestFullDisk(t *testing.T) {
	f := newFixture(t)
	intents := manyIntents(t, f, 64)
	for _, tc := range []struct {
		name string
		args func(out string) []string
	}{
		{"run streaming", func(o string) []string { return runArgs(f, o, "--mode", "streaming") }},
		{"run batch", func(o string) []string { return runArgs(f, o, "--mode", "batch") }},
		{"run sharded", func(o string) []string { return runArgs(f, o, "--shards", "2") }},
		{"effector", func(o string) []string {
			return append(effArgs(f, o), "--input", intents, "--dedup", "bbolt:"+filepath.Join(f.dir, "full-disk-dedup.db"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(smallDisk(t), "out")
			code, stdout, stderr := execCLI(t, nil, tc.args(out)...)
			if code != 1 {
				t.Fatalf("exit %d on a full disk\n%s\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, "no space left on device") {
				t.Errorf("stderr does not name the full disk:\n%s", stderr)
			}
			if left := leftovers(t, out); len(left) > 0 {
				t.Fatalf("files left on the full disk: %v\n%s", left, stderr)
			}
		})
	}
}

// manyIntents writes n signed lookup intents as a typed record file: their results are more
// than the small disk holds.
func manyIntents(t *testing.T, f *fixture, n int) string {
	t.Helper()
	kr, err := intent.LoadKeyring(f.ringRef)
	if err != nil {
		t.Fatal(err)
	}
	data := records.Header("beam_agents.v1.ToolIntent")
	for i := range n {
		key := []byte(fmt.Sprintf("customer-%d", i))
		ti := &pb.ToolIntent{IntentId: intent.ID(key, 0, 0), EntityKey: key, ToolName: support.ToolLookupOrder,
			ArgsJson: `{"support.lookup_order.order_id":"A-1001"}`, ExpiresAtMs: 1 << 50}
		if err := intent.Sign(ti, kr); err != nil {
			t.Fatal(err)
		}
		b, _ := proto.Marshal(ti)
		data = append(binary.AppendUvarint(data, uint64(len(b))), b...)
	}
	p := filepath.Join(f.dir, "many-intents.binpb")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
