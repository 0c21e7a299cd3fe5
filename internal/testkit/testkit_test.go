package testkit_test

import (
	"os/exec"
	"strings"
	"testing"
)

const kits = "github.com/beamagents/beamagents/internal/testkit/"

// No package outside internal/testkit imports a test kit except from its tests.
func TestOnlyTestsImportKits(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "github.com/beamagents/beamagents/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if strings.HasPrefix(pkg, kits) {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, kits) {
				t.Errorf("%s imports %s outside its tests", pkg, imp)
			}
		}
	}
}
