package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/testsvc"
	"github.com/beamagents/beamagents/records"
)

// The approvals' hostile values: markup in a refund's reason, in the second approval's key
// and in arguments of it that do not decode (shown as they are), and in the approver's
// identity (an authenticating proxy passes on what it is given).
const (
	hostileReason   = `</code><img src=x onerror=window.pwned=2>`
	hostileKey2     = `"><svg onload="window.pwned=3">`
	hostileArgs     = `{"payments.refund.note":"</code><script>window.pwned=4</script>"}`
	hostileApprover = `alice"><img src=x onerror="window.pwned=9">`
)

// writeApprovals writes, as a run writes its intents output, two refund approvals signed by
// a keyring it writes too: one for hostileKey with markup in its reason, one for hostileKey2
// with hostileArgs. It returns the intents file, the keyring reference and the intents' ids.
func writeApprovals(t *testing.T, dir string) (file, ring string, ids [2]string) {
	t.Helper()
	secret := bytes.Repeat([]byte{0x5a}, 32)
	ringFile := filepath.Join(dir, "keyring.json")
	if err := os.WriteFile(ringFile, []byte(`{"active":"k1","keys":[{"id":"k1","secret":"`+base64.StdEncoding.EncodeToString(secret)+`"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	kr, err := intent.NewKeyring("k1", map[string][]byte{"k1": secret})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []proto.Message
	args := []string{`{"payments.refund.order_id":"A-2002","payments.refund.amount_cents":"4599","payments.refund.reason":"` + hostileReason + `"}`, hostileArgs}
	for i, key := range [][]byte{hostileKey, []byte(hostileKey2)} {
		ti := &pb.ToolIntent{IntentId: intent.ID(key, 0, 1), EntityKey: key, StepIndex: 1, ToolName: support.ToolRefund,
			ArgsJson: args[i], CreatedAtMs: t0, ExpiresAtMs: 1 << 50, Kind: pb.ToolIntent_APPROVAL}
		if err := intent.Sign(ti, kr); err != nil {
			t.Fatal(err)
		}
		ids[i] = ti.GetIntentId()
		msgs = append(msgs, ti)
	}
	file = filepath.Join(dir, "intents.binpb")
	appendTo(t, file, typedFile(t, msgs...))
	return file, "file:" + ringFile, ids
}

// states is the state of each approval the page at u lists, in its order.
func states(t *testing.T, ctx context.Context, u string) []string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.ID("approvals"))); err != nil {
		t.Fatal(err)
	}
	return testsvc.Browse(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#approvals tr[data-state]')].map(r => r.dataset.state)`))
}

// decisions reads the approval decisions among the results a files run wrote in dir.
func decisions(t *testing.T, dir string) map[string]*pb.AgentEnvelope_Approval {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "results.binpb"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, err := records.Split(data)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := records.Frames(body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*pb.AgentEnvelope_Approval{}
	for _, rec := range recs {
		env := &pb.AgentEnvelope{}
		if err := proto.Unmarshal(rec, env); err != nil {
			t.Fatal(err)
		}
		if ap := env.GetApproval(); ap != nil {
			out[ap.GetIntentId()] = ap
		}
	}
	return out
}

// The built binary's effector, serving its approvals page (`effector --console`) over intent
// files, driven by a headless Chromium as an operator's browser and a hostile page would: it
// answers no foreign Host (DNS rebinding), stored markup in keys, arguments and the approver
// stays text, no other site decides through the operator's browser even holding the page's
// token, and the operator's own decisions go through and are written with the results.
func TestEffectorApprovalsInChromium(t *testing.T) {
	ctx := browser(t, hostileApprover) // skips, or fails under CI, without Chromium
	dir := t.TempDir()
	intents, ring, ids := writeApprovals(t, dir)
	results := filepath.Join(dir, "results")
	e := startServing(t, "approval console on ", "effector", "--input", intents, "--output_dir", results, "--keyring", ring,
		"--dedup", "bbolt:"+filepath.Join(dir, "dedup.db"), "--agents", support.Name,
		"--console", "127.0.0.1:0", "--approver_header", "X-Approver", "--allowed_hosts", "console.example")
	page := e.url + "/approvals"
	undecided := func(t *testing.T) {
		t.Helper()
		if got := states(t, ctx, page); !slices.Equal(got, []string{"pending", "pending"}) {
			t.Fatalf("the approvals are %q, want both pending", got)
		}
	}
	openUntil(t, ctx, page, "#approvals", func(s string) bool { return strings.Count(s, "pending") == 2 }) // listed once the files are read
	token := testsvc.Browse(t, ctx, chromedp.Evaluate[string](`document.querySelector('input[name=csrf]').value`))

	t.Run("host names", func(t *testing.T) {
		// A rebound page could read the token as the operator's browser does; it is refused
		// before it gets that far, reading and acting.
		reboundRefused(t, ctx, e, "/approvals",
			`fetch('/approvals').then(r => r.status)`,
			fmt.Sprintf(`fetch('/approvals/decide', {method: 'POST', body: new URLSearchParams({intent_id: %q, decision: 'reject', csrf: %q})}).then(r => r.status)`, ids[0], token),
			`fetch('/signin?next=/approvals').then(r => r.status)`)
		if status := open(t, ctx, "http://console.example:"+e.port+"/approvals"); status != http.StatusOK {
			t.Fatalf("the proxy's name (--allowed_hosts) answered %d", status)
		}
		undecided(t)
	})

	t.Run("stored script", func(t *testing.T) {
		if status := open(t, ctx, page); status != http.StatusOK {
			t.Fatalf("/approvals: %d", status)
		}
		inert(t, ctx, "/approvals")
		for i, key := range []string{string(hostileKey), hostileKey2} {
			if got := testsvc.PageText(t, ctx, "#row-"+ids[i]+" td:first-child"); got != key {
				t.Fatalf("the key is shown as %q", got)
			}
		}
		// In the tool's shape, the reason; arguments that do not decode, as they are.
		var shaped struct{ Reason string }
		if got := testsvc.PageText(t, ctx, "#row-"+ids[0]+" code"); json.Unmarshal([]byte(got), &shaped) != nil || shaped.Reason != hostileReason {
			t.Fatalf("the arguments are shown as %q", got)
		}
		if got := testsvc.PageText(t, ctx, "#row-"+ids[1]+" code"); got != hostileArgs {
			t.Fatalf("the arguments that do not decode are shown as %q", got)
		}
		if got := testsvc.PageText(t, ctx, "#who"); got != hostileApprover {
			t.Fatalf("the approver is shown as %q", got)
		}
	})

	t.Run("cross-site decisions", func(t *testing.T) {
		// Another site's form, with a guessed token and with the page's own (leaked).
		form := `<form method="post" action="%s/approvals/decide"><input name="intent_id" value="%s"><input name="decision" value="reject">
<input name="csrf" value="%s"><button id="%s">go</button></form>`
		attacker := attackerPage(t, "<!doctype html>"+fmt.Sprintf(form, e.url, ids[0], "guessed", "guessed")+fmt.Sprintf(form, e.url, ids[0], token, "leaked"))
		crossSiteRefused(t, ctx, attacker, "guessed")
		crossSiteRefused(t, ctx, attacker, "leaked")
		crossSiteFetch(t, ctx, attacker, e.url+"/approvals/decide", map[string]string{"intent_id": ids[1], "decision": "approve", "csrf": token})
		undecided(t)
	})

	t.Run("operator's decisions", func(t *testing.T) {
		undecided(t)
		if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.Click(chromedp.ID("approve-"+ids[0])),
			chromedp.WaitVisible(chromedp.CSS(`#row-`+ids[0]+`[data-state^="approved"]`))); err != nil {
			t.Fatal(err)
		}
		if got := testsvc.PageText(t, ctx, "#row-"+ids[0]+" td.state"); got != "approved by "+hostileApprover {
			t.Fatalf("the decided approval's state: %q", got)
		}
		inert(t, ctx, "/approvals, decided")
		// The last decision ends the files run, which writes both with the results.
		if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.Click(chromedp.ID("reject-"+ids[1]))); err != nil {
			t.Fatal(err)
		}
		if err := e.exit(); err != nil {
			t.Fatalf("%v\n%s", err, e.stderr.String())
		}
		got := decisions(t, results)
		if len(got) != 2 || !got[ids[0]].GetApproved() || got[ids[1]].GetApproved() ||
			got[ids[0]].GetApprover() != hostileApprover || got[ids[1]].GetApprover() != hostileApprover {
			t.Fatalf("the decisions written: %v", got)
		}
	})
}
