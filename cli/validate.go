package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/outfiles"
	"github.com/beamagents/beamagents/internal/secretref"
	"github.com/beamagents/beamagents/ltm/backend"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/records"
)

// Every command checks its flags with the checks below before it does anything: each check
// names its flag and what the flag accepts, and the first refusal is the command's one line
// on stderr, with exit status 2 (docs/files.md). A check never repeats a value that is or may
// be a secret (references, keys, URLs that may carry credentials).

// A usageError is a flag value refused at launch.
type usageError struct {
	flag, problem string
}

func (u *usageError) Error() string {
	if u.flag == "" {
		return u.problem
	}
	return "--" + u.flag + ": " + u.problem
}

func refuseFlag(flag, format string, args ...any) error {
	return &usageError{flag: flag, problem: fmt.Sprintf(format, args...)}
}

// A check is one launch-time check; checks run in order and stop at the first refusal, so a
// later check (creating an output folder) runs only when the earlier ones passed.
type check func() error

// checkFlags runs checks and reports the first refusal: exit status 2.
func checkFlags(e *env, checks ...check) (int, bool) {
	for _, c := range checks {
		if err := c(); err != nil {
			e.errorf("%v", err)
			return 2, false
		}
	}
	return 0, true
}

// oneOf accepts one of the allowed values.
func oneOf(name, v string, allowed ...string) check {
	return func() error {
		if slices.Contains(allowed, v) {
			return nil
		}
		return refuseFlag(name, "%q is not one of %s", v, strings.Join(allowed, ", "))
	}
}

// verification accepts a verification mode, off, permissive or require, and hands it to into:
// the flag's value is parsed once, here.
func verification(name, v string, into func(intent.Mode)) check {
	return func() error {
		m, err := intent.ParseMode(v)
		if err != nil {
			return refuseFlag(name, "%q is not one of off, permissive, require", v)
		}
		into(m)
		return nil
	}
}

// atLeast accepts an integer of at least lo.
func atLeast[N int | int64](name string, v, lo N) check {
	return func() error {
		if v >= lo {
			return nil
		}
		return refuseFlag(name, "%d is below its minimum %d", v, lo)
	}
}

// atMost accepts an integer of at most hi.
func atMost[N int | int64](name string, v, hi N) check {
	return func() error {
		if v <= hi {
			return nil
		}
		return refuseFlag(name, "%d is above its maximum %d", v, hi)
	}
}

// positive accepts a duration above zero; nonNegative one of zero or more.
func positive(name string, d time.Duration) check {
	return func() error {
		if d > 0 {
			return nil
		}
		return refuseFlag(name, "%s is not a positive duration (for example 30s)", d)
	}
}

func nonNegative(name string, d time.Duration) check {
	return func() error {
		if d >= 0 {
			return nil
		}
		return refuseFlag(name, "%s is negative: want 0 or a positive duration (for example 5m)", d)
	}
}

// when runs c only if cond holds.
func when(cond bool, c check) check {
	return func() error {
		if !cond {
			return nil
		}
		return c()
	}
}

// noArgs refuses positional arguments.
func noArgs(fs *flag.FlagSet) check {
	return func() error {
		if fs.NArg() == 0 {
			return nil
		}
		return refuseFlag("", "unexpected argument %q: this command takes flags only (a flag's value with a space in it needs quotes)", fs.Arg(0))
	}
}

// required refuses an empty flag.
func required(name, v, what string) check {
	return func() error {
		if v != "" {
			return nil
		}
		return refuseFlag(name, "required: %s", what)
	}
}

// pubsubTopic accepts a topic name, projects/P/topics/T.
func pubsubTopic(name, v string) check {
	return func() error {
		if _, err := wire.ParseTopic(v); err != nil {
			return refuseFlag(name, "%v", err)
		}
		return nil
	}
}

// pubsubSubscription accepts a subscription name, projects/P/subscriptions/S.
func pubsubSubscription(name, v string) check {
	return func() error {
		if _, err := wire.ParseSubscription(v); err != nil {
			return refuseFlag(name, "%v", err)
		}
		return nil
	}
}

// baseURL accepts an empty value or a base URL an API of kind api can be reached at
// (provider.CheckBaseURL: scheme, host, port, a path that can be an API root). The value is
// not repeated: a URL may carry credentials.
func baseURL(name, api, v string) check {
	return func() error {
		var refused *provider.BaseURLError
		if errors.As(provider.CheckBaseURL(api, v), &refused) {
			return refuseFlag(name, "%s", refused.Problem)
		}
		return nil
	}
}

// registered accepts a name among the registered ones.
func registered(name, v, kind string, names []string) check {
	return func() error {
		if slices.Contains(names, v) {
			return nil
		}
		if len(names) == 0 {
			return refuseFlag(name, "unknown %s %q: this binary registers none", kind, v)
		}
		return refuseFlag(name, "unknown %s %q; registered: %s", kind, v, strings.Join(names, ", "))
	}
}

// maxSniffed bounds the files of a glob whose first bytes are checked at launch.
const maxSniffed = 1000

// inputGlob accepts a glob matching at least one file, each of whose first bytes say it holds
// records of type want (records.Sniff): a file of another type is refused at launch.
func inputGlob(ctx context.Context, name, glob string, want protoreflect.FullName) check {
	return func() error {
		files, err := listGlob(ctx, name, glob)
		if err != nil {
			return err
		}
		for _, f := range files[:min(len(files), maxSniffed)] {
			head, err := outfiles.Head(ctx, f)
			if err != nil {
				return refuseFlag(name, "reading %s: %v", f, err)
			}
			if err := records.Sniff(f, head, want); err != nil {
				return refuseFlag(name, "%v", err)
			}
		}
		return nil
	}
}

func listGlob(ctx context.Context, name, glob string) ([]string, error) {
	if _, err := filepath.Match(glob, ""); err != nil && !strings.Contains(glob, "://") {
		return nil, refuseFlag(name, "%q is not a valid glob: %v", glob, err)
	}
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return nil, refuseFlag(name, "%q: %v", glob, err)
	}
	defer fs.Close()
	files, err := fs.List(ctx, glob)
	if err != nil {
		return nil, refuseFlag(name, "%q: listing the files: %v", glob, err)
	}
	var regular []string
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.IsDir() {
			continue
		}
		regular = append(regular, f)
	}
	if len(regular) == 0 {
		return nil, refuseFlag(name, "%q matches no file", glob)
	}
	slices.Sort(regular)
	return regular, nil
}

// smallFile accepts an empty value or a regular file of at most max bytes.
func smallFile(name, path string, max int64) check {
	return func() error {
		if path == "" {
			return nil
		}
		st, err := os.Stat(path)
		switch {
		case err != nil:
			return refuseFlag(name, "%v", err)
		case !st.Mode().IsRegular():
			return refuseFlag(name, "%s is not a regular file", path)
		case st.Size() > max:
			return refuseFlag(name, "%s has %d bytes, more than the %d this flag accepts", path, st.Size(), max)
		}
		return nil
	}
}

// maxConfigBytes caps small file arguments: agent configs, keyrings, user lists, schema
// documents and descriptor sets.
const maxConfigBytes = 16 << 20

// refShape is how a reference that does not parse is reported: by its shape, never its value.
const refShape = "the value is not a reference (env:VAR, file:PATH or gcpsm:SECRET); did you paste the secret itself?"

// keyringRef accepts an empty value or a keyring reference. With resolve (the keyring is read
// where this process runs) the keyring is loaded once now, so that a bad one is refused before
// anything runs; otherwise only the reference's form is checked.
func keyringRef(name, ref string, resolve bool) check {
	return func() error {
		if ref == "" {
			return nil
		}
		if !refForm(ref) {
			return refuseFlag(name, "%s", strings.Replace(refShape, "the secret itself", "the keyring itself", 1))
		}
		if !resolve || !localRef(ref) {
			return nil
		}
		if scheme, path, _ := secretref.Parse(ref); scheme == secretref.SchemeFile {
			if err := smallFile(name, path, maxConfigBytes)(); err != nil {
				return err
			}
		}
		if _, err := intent.LoadKeyring(ref); err != nil {
			return refuseFlag(name, "%s", redact(err, ref))
		}
		return nil
	}
}

// memoryStoreRef accepts an empty value or a long-term memory store reference, given itself
// or behind a secret reference; with resolve, an env: or file: reference is read now and
// must hold a store reference. The store is opened on the workers, not here.
func memoryStoreRef(name, ref string, resolve bool) check {
	return func() error {
		if ref == "" {
			return nil
		}
		if err := backend.CheckRef(ref); err != nil {
			return refuseFlag(name, "%s", redact(err, ref))
		}
		if !resolve || !localRef(ref) {
			return nil
		}
		if _, err := backend.Resolve(context.Background(), ref); err != nil {
			return refuseFlag(name, "%s", redact(err, ref))
		}
		return nil
	}
}

// keyRef accepts an empty value or an API key reference, read now when resolve is set.
func keyRef(name, ref string, resolve bool) check {
	return func() error {
		if ref == "" {
			return nil
		}
		if !refForm(ref) {
			return refuseFlag(name, "%s", strings.Replace(refShape, "the secret itself", "the key itself", 1))
		}
		if err := provider.CheckKeyRef(ref); err != nil {
			return refuseFlag(name, "%s", redact(err, ref))
		}
		if !resolve || !localRef(ref) {
			return nil
		}
		if _, err := provider.LoadKey(ref); err != nil {
			return refuseFlag(name, "%s", redact(err, ref))
		}
		return nil
	}
}

// refForm reports whether ref has a reference's form: a known scheme, a colon and a
// non-empty rest without line breaks.
func refForm(ref string) bool {
	_, _, ok := secretref.Parse(ref)
	return ok && !strings.ContainsAny(ref, "\n\r{}\"")
}

// localRef reports whether ref is read from this process's environment or file system.
func localRef(ref string) bool { return secretref.Local(ref) }

// redact is err's text with any copy of the reference's value removed, as a last guard: the
// reference itself is not a secret, but what it names is, and an error must not carry it.
func redact(err error, ref string) string {
	s := err.Error()
	if _, arg, ok := strings.Cut(ref, ":"); ok && len(arg) > 0 {
		if v, ok := os.LookupEnv(arg); ok && len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// outputDir accepts a folder this process can write (created when missing, for a local path)
// that holds none of the files a run would write, matched by globs; with replace those files
// are removed first. A gs:// folder is listed the same way but neither created nor probed.
//
// The folder may not hold an input: inputs are the input globs, by flag name, whose files
// must not be among those a run would write or replace.
func outputDir(ctx context.Context, name, dir string, replace bool, globs []string, inputs ...[2]string) check {
	return func() error {
		if dir == "" {
			return nil
		}
		if !strings.Contains(dir, "://") {
			if err := writableDir(name, dir); err != nil {
				return err
			}
		}
		existing, err := outfiles.List(ctx, dir, globs)
		if err != nil && strings.Contains(dir, "://") {
			// A remote folder this process cannot list (no credentials here, or no network on
			// a dry run): the workers' own access decides.
			return nil
		}
		if err != nil {
			return refuseFlag(name, "listing %s: %v", dir, err)
		}
		if len(existing) == 0 {
			return nil
		}
		for _, in := range inputs {
			if err := notReplaced(ctx, name, dir, existing, in[0], in[1]); err != nil {
				return err
			}
		}
		if !replace {
			shown := existing[:min(len(existing), 3)]
			return refuseFlag(name, "%s already holds another run's files (%s%s); pass --replace to replace them, or choose another folder",
				dir, strings.Join(shown, ", "), map[bool]string{true: ", …", false: ""}[len(existing) > 3])
		}
		if err := outfiles.Remove(ctx, dir, globs); err != nil {
			return refuseFlag(name, "removing the earlier run's files: %v", err)
		}
		return nil
	}
}

// notReplaced refuses an output folder whose run files include a file of the input glob.
func notReplaced(ctx context.Context, name, dir string, existing []string, inputFlag, glob string) error {
	if glob == "" {
		return nil
	}
	files, err := listGlob(ctx, inputFlag, glob)
	if err != nil {
		return nil // the input's own check reports it
	}
	for _, f := range files {
		for _, x := range existing {
			if same(f, outfiles.Join(dir, x)) {
				return refuseFlag(name, "%s is --%s's file %s: a run never writes over its input; write to another folder", dir, inputFlag, x)
			}
		}
	}
	return nil
}

// same reports whether two paths name the same file.
func same(a, b string) bool {
	if a == b {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

func writableDir(name, dir string) error {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return refuseFlag(name, "%s is a file, not a folder", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return refuseFlag(name, "cannot create the folder: %v", unwrapPath(err))
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return refuseFlag(name, "%s is not writable: %v", dir, unwrapPath(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
