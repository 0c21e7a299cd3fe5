package console_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// The shadow page sums the comparisons up: the agreement rate over all, per key and per
// minute of event time, and the divergences by kind.
func TestShadowPage(t *testing.T) {
	st, err := console.Open(filepath.Join(t.TempDir(), "console.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cs := []*pb.ShadowComparison{
		{EntityKey: []byte("customer-1"), Seq: 0, EventTimeMs: 1767225600000},
		{EntityKey: []byte("customer-2"), Seq: 0, EventTimeMs: 1767225601000, Kind: "tool and arguments", Detail: "intent x"},
		{EntityKey: []byte("customer-2"), Seq: 1, EventTimeMs: 1767225690000},
		{EntityKey: []byte("<b>"), Seq: 0, EventTimeMs: 1767225690000, Kind: "final text", Missing: true},
	}
	h, err := console.New(console.Options{Store: st, Hosts: []string{"example.com"}, Shadow: func() ([]*pb.ShadowComparison, error) { return cs, nil }})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/shadow", nil))
	body := w.Body.String()
	if w.Code != 200 {
		t.Fatalf("status %d\n%s", w.Code, body)
	}
	for _, want := range []string{"4 firings compared, 2 divergent: <b>50.00%</b> agree", "tool and arguments", "final text",
		"customer-2", "&lt;b&gt;", "50.00%", "0.00%", "100.00%"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<b><") {
		t.Error("a key is not escaped")
	}
	// Without a source there is no page.
	h, _ = console.New(console.Options{Store: st, Hosts: []string{"example.com"}})
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/shadow", nil))
	if w.Code != http.StatusNotFound {
		t.Errorf("no source: status %d", w.Code)
	}
}
