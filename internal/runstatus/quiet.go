package runstatus

import (
	"context"
	"io"
	"log/slog"
	"strings"
)

// QuietRunner keeps the runner's informational logging off w (warnings and errors pass),
// and the Go SDK's error about bundles Prism asks to finalize that registered nothing to
// finalize (the reader's restriction-pairing bundles), which is noise.
func QuietRunner(w io.Writer) {
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})
	slog.SetDefault(slog.New(&dropHandler{Handler: h}))
}

type dropHandler struct{ slog.Handler }

func (d *dropHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "couldn't find plan in finalizing map") {
		return nil
	}
	return d.Handler.Handle(ctx, r)
}

func (d *dropHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return &dropHandler{Handler: d.Handler.WithAttrs(a)}
}

func (d *dropHandler) WithGroup(n string) slog.Handler {
	return &dropHandler{Handler: d.Handler.WithGroup(n)}
}
