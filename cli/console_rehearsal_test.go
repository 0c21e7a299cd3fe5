package cli_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/beamagents/beamagents/console"
)

// consoleShowsRehearsal runs the console command docs/changes.md shows for a rehearsal's
// report, verbatim, in dir (where the page's rehearse blocks ran): the /rehearsal page shows
// the divergent device, linked to its entity page once the baseline's outputs are read.
func consoleShowsRehearsal(t *testing.T, dir string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "changes.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`beamagents (console [^`]*--rehearsal [^`]*)`").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/changes.md shows no console command with --rehearsal")
	}
	cmd := exec.Command(bin, strings.Fields(string(m[1]))...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "console on "); ok {
				started <- strings.Fields(u)[0]
			}
		}
		close(started)
	}()
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("the console: %v\n%s", err, stderr.String())
		}
	}()
	var u string
	select {
	case u = <-started:
	case <-time.After(time.Minute):
	}
	if u == "" {
		t.Fatalf("the console did not start:\n%s", stderr.String())
	}
	const device = "dev-9007199254740993"
	link := `<a href="` + console.KeyPath([]byte(device)) + `">` + device + `</a>`
	var body string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(u + "rehearsal")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if body = string(b); resp.StatusCode != http.StatusOK {
			t.Fatalf("/rehearsal: %d\n%s", resp.StatusCode, body)
		}
		if strings.Contains(body, link) || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{link, "2 keys rehearsed, <b>1</b> divergent (<b>50.00%</b>)", "<td>model request</td>", "<td>unanswered model call</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("/rehearsal lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "dev-17") {
		t.Errorf("/rehearsal lists dev-17, which did not diverge:\n%s", body)
	}
}
