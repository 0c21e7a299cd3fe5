package devloop

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/tracing"
)

// An attempt's line says what drove it, how it ended, its model calls and what it waits on.
func TestAttemptLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a      attempt
		status string
		want   string
	}{
		{"completed", attempt{key: "ann", seq: 2, kind: "event", billed: 1, cached: 2}, "completed",
			"activation   ann          seq 2  event → completed  model calls 1 (+2 from the replay cache)"},
		{"suspended", attempt{key: "ann", seq: 3, kind: "event", emitted: []string{"APPROVAL refund i1"}, signal: "paid", wake: "1767225600000"}, tracing.StatusSuspended,
			"waits on APPROVAL refund i1, SIGNAL paid, TIMER 2026-01-01T00:00:00Z"},
		{"suspended on pending", attempt{key: "bob", suspension: []string{"i2", "i3"}}, tracing.StatusSuspended, "waits on i2, i3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.line(tc.status); !strings.Contains(got, tc.want) {
				t.Fatalf("line %q lacks %q", got, tc.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	final, _ := proto.Marshal(&pb.FinalReply{EntityKey: []byte("ann"), Message: `{"value":{"fields":{"2":"there","1":"hello"}}}`})
	plain, _ := proto.Marshal(&pb.FinalReply{EntityKey: []byte("bob"), Message: " just text \n"})
	dead, _ := proto.Marshal(&pb.ActivationErrorRecord{EntityKey: []byte("cy"), Reason: "model_error", Detail: strings.Repeat("x", 400)})
	for _, tc := range []struct {
		name      string
		data      []byte
		final     bool
		key, want string
	}{
		{"reply fields", final, true, "ann", "final reply  ann          hello there"},
		{"reply text", plain, true, "bob", "final reply  bob          just text"},
		{"dead letter", dead, false, "cy", "dead letter  cy           model_error: " + strings.Repeat("x", 300) + "…"},
		{"undecodable", []byte{0xff}, true, "", "final reply (undecodable)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, line := describe(tc.data, tc.final)
			if key != tc.key || line != tc.want {
				t.Fatalf("describe = %q, %q; want %q, %q", key, line, tc.key, tc.want)
			}
		})
	}
}
