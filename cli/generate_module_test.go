package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/protobind"
)

// The commands and the .proto docs/interaction.md gives a user's module, run verbatim in a new
// module that replaces the runtime with this checkout (`go get -tool …/cmd/beamagents`, `go
// tool beamagents generate proto`); then a program of that module compiles the generated
// message with package interaction and prints its schema digest, the digest the same .proto
// has here.
func TestGenerateInAUsersModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the beamagents tool in a new module")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	commands, protoName, protoText := usersModuleDoc(t)
	dir := writeTree(t, map[string]string{
		"go.mod":  "module example.com/shop\n\ngo 1.26.7\n\nreplace github.com/beamagents/beamagents => " + repo + "\n",
		protoName: protoText,
		"main.go": `package main

import (
	"fmt"

	"example.com/shop/shoppb"
	"github.com/beamagents/beamagents/interaction"
)

func main() {
	s, err := interaction.Compile((&shoppb.RefundArgs{}).ProtoReflect().Descriptor())
	if err != nil {
		panic(err)
	}
	fmt.Println(s.RootTypeID(), s.Digest())
}
`,
	})
	env := userModuleEnv(t)
	var out string
	for _, args := range commands {
		out = goCommand(t, dir, env, args...)
	}
	if out != filepath.Join("shoppb", "tool.pb.go")+"\n" {
		t.Fatalf("generate proto wrote %q", out)
	}
	got := goCommand(t, dir, env, "go", "run", ".")
	if want := "shop.refund.args " + digestHere(t, filepath.Join(dir, "proto")) + "\n"; got != want {
		t.Fatalf("the program printed %q, want %q", got, want)
	}
}

// userModuleEnv is the environment of the go commands. The runtime is not published: the
// module proxy answers a lookup of one of its paths with an error, not "not found", so the
// lookup falls through ("|") to an empty file proxy that says "not found", as a proxy says
// of a path that is no module; the replace directive then supplies the module.
func userModuleEnv(t *testing.T) []string {
	out, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	proxy := strings.TrimSuffix(strings.TrimSpace(string(out)), ",direct")
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod",
		"GOPROXY="+proxy+"|file://"+filepath.ToSlash(t.TempDir()))
}

func goCommand(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// usersModuleDoc returns the commands (comments dropped) of the first sh block of
// docs/interaction.md's "Schemas in your own module", and the name (its first comment line)
// and text of its proto block.
func usersModuleDoc(t *testing.T) (commands [][]string, protoName, protoText string) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "interaction.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Schemas in your own module\n")
	section, _, _ = strings.Cut(section, "\n## ")
	_, sh, ok2 := strings.Cut(section, "```sh\n")
	sh, _, _ = strings.Cut(sh, "```")
	_, protoText, ok3 := strings.Cut(section, "```proto\n")
	protoText, _, _ = strings.Cut(protoText, "```")
	first, _, _ := strings.Cut(protoText, "\n")
	protoName, ok4 := strings.CutPrefix(first, "// ")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatal("docs/interaction.md has no \"Schemas in your own module\" section with an sh and a proto block")
	}
	for _, line := range strings.Split(strings.TrimSpace(sh), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		commands = append(commands, strings.Fields(cmd))
	}
	return commands, protoName, protoText
}

// digestHere compiles the user's tool arguments in this process.
func digestHere(t *testing.T, protoPath string) string {
	files, err := protobind.Compile(context.Background(), protoPath, []string{"shop/v1/tool.proto"})
	if err != nil {
		t.Fatal(err)
	}
	md := files[0].Messages().ByName("RefundArgs")
	s, err := interaction.Compile(md)
	if err != nil {
		t.Fatal(err)
	}
	return s.Digest()
}
