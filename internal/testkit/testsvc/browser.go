package testsvc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Browser starts a headless Chromium (Chromium's binary) for the test and returns its
// context, ended with the test or after three minutes. With approver set, every request
// carries it in X-Approver, as an authenticating proxy would send it; opts add to the
// browser's options (a host-resolver rule, for instance).
func Browser(t *testing.T, approver string, opts ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	all := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Chromium(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800),
	}, opts...)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), all...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel)
	if approver == "" {
		return ctx
	}
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"X-Approver": approver}})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

// Browse runs a in the browser and returns its value, failing the test on an error.
func Browse[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// PageText is the text of the first element matching the CSS selector sel, trimmed.
func PageText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return strings.TrimSpace(Browse(t, ctx, chromedp.Text(chromedp.CSS(sel))))
}
