package console

import (
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strings"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// ShadowSource returns the comparisons of a shadow agent with production (`run
// --shadow_agent`: the shadow_divergences output), read anew for each view of the page.
type ShadowSource func() ([]*pb.ShadowComparison, error)

// shadowView is the shadow page: the agreement of the shadow with production over all its
// comparisons, per key and per minute of event time, and the kinds of its divergences.
type shadowView struct {
	Compared, Divergent int
	Kinds               []shadowCount // divergences by kind, most first
	Keys                []shadowRow   // by key, the most divergent first
	Minutes             []shadowRow   // by minute of event time, in order
}

// shadowCount is one kind's divergences.
type shadowCount struct {
	Kind string
	N    int
}

// shadowRow is the comparisons of one key or one minute.
type shadowRow struct {
	Key                 []byte // the key's row
	AtMs                int64  // the minute's row
	Compared, Divergent int
	Kinds               string // its divergence kinds, comma-separated
}

// Rate is the share of r's comparisons that agree, in percent.
func (r shadowRow) Rate() float64 { return rate(r.Compared, r.Divergent) }

// Rate is the share of all comparisons that agree, in percent.
func (v shadowView) Rate() float64 { return rate(v.Compared, v.Divergent) }

func rate(compared, divergent int) float64 {
	if compared == 0 {
		return 100
	}
	return 100 * float64(compared-divergent) / float64(compared)
}

// newShadowView sums comparisons up.
func newShadowView(cs []*pb.ShadowComparison) shadowView {
	v := shadowView{Compared: len(cs)}
	kinds := map[string]int{}
	keys, minutes := map[string]*shadowRow{}, map[int64]*shadowRow{}
	rowKinds := map[*shadowRow]map[string]bool{}
	add := func(r *shadowRow, c *pb.ShadowComparison) {
		r.Compared++
		if c.GetKind() != "" {
			r.Divergent++
			if rowKinds[r] == nil {
				rowKinds[r] = map[string]bool{}
			}
			rowKinds[r][c.GetKind()] = true
		}
	}
	for _, c := range cs {
		if c.GetKind() != "" {
			v.Divergent++
			kinds[c.GetKind()]++
		}
		k := string(c.GetEntityKey())
		if keys[k] == nil {
			keys[k] = &shadowRow{Key: c.GetEntityKey()}
		}
		add(keys[k], c)
		m := c.GetEventTimeMs() / 60_000 * 60_000
		if minutes[m] == nil {
			minutes[m] = &shadowRow{AtMs: m}
		}
		add(minutes[m], c)
	}
	for r, ks := range rowKinds {
		r.Kinds = strings.Join(slices.Sorted(maps.Keys(ks)), ", ")
	}
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		v.Kinds = append(v.Kinds, shadowCount{k, kinds[k]})
	}
	slices.SortStableFunc(v.Kinds, func(a, b shadowCount) int { return b.N - a.N })
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		v.Keys = append(v.Keys, *keys[k])
	}
	slices.SortStableFunc(v.Keys, func(a, b shadowRow) int { return b.Divergent - a.Divergent })
	for _, m := range slices.Sorted(maps.Keys(minutes)) {
		v.Minutes = append(v.Minutes, *minutes[m])
	}
	return v
}

func (c *server) shadow(w http.ResponseWriter, r *http.Request) {
	who, ok := c.reader(w, r)
	if !ok {
		return
	}
	cs, err := c.o.Shadow()
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, 200, "shadow", "Shadow", who, newShadowView(cs))
}

func init() {
	base := template.Must(template.New("base").Funcs(funcs).Parse(baseHTML))
	templates["shadow"] = template.Must(base.Parse(shadowHTML))
}

const shadowHTML = `{{define "content"}}
<h1>Shadow agent</h1>
{{with .Data}}
<p>{{.Compared}} firings compared, {{.Divergent}} divergent: <b>{{num .Rate}}%</b> agree.</p>
{{if .Kinds}}<h2>Divergences by kind</h2>
<table><tr><th>kind</th><th>divergences</th></tr>
{{range .Kinds}}<tr><td>{{.Kind}}</td><td class="num">{{.N}}</td></tr>{{end}}</table>{{end}}
<h2>By key</h2>
<table><tr><th>entity key</th><th>compared</th><th>divergent</th><th>agreement</th><th>kinds</th></tr>
{{range .Keys}}<tr><td><a href="{{keyPath .Key}}">{{key .Key}}</a></td><td class="num">{{.Compared}}</td><td class="num">{{.Divergent}}</td><td class="num">{{num .Rate}}%</td><td>{{.Kinds}}</td></tr>{{end}}</table>
<h2>Over event time</h2>
<table><tr><th>minute</th><th>compared</th><th>divergent</th><th>agreement</th><th>kinds</th></tr>
{{range .Minutes}}<tr><td>{{time .AtMs}}</td><td class="num">{{.Compared}}</td><td class="num">{{.Divergent}}</td><td class="num">{{num .Rate}}%</td><td>{{.Kinds}}</td></tr>{{end}}</table>
{{end}}
{{end}}`
