package console

import "html/template"

// templates holds one template per page: the base layout with the page's content.
var templates = func() map[string]*template.Template {
	base := template.Must(template.New("base").Funcs(funcs).Parse(baseHTML))
	out := map[string]*template.Template{}
	for name, content := range pagesHTML {
		out[name] = template.Must(template.Must(base.Clone()).Parse(content))
	}
	return out
}()

const baseHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}} · beamagents console</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
nav{background:#1d2b3a;color:#fff;padding:.6em 1.5em;display:flex;gap:1.2em;align-items:center;flex-wrap:wrap}
nav a{color:#cfe3ff;text-decoration:none}nav a:hover{text-decoration:underline}nav .brand{font-weight:bold;color:#fff}
nav form{margin-left:auto}nav input{width:22em}
main{padding:1em 1.5em;max-width:90em}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;background:#fff;max-width:100%}
td,th{border:1px solid #ddd;padding:.35em .55em;text-align:left;vertical-align:top}
td{overflow-wrap:anywhere;word-break:break-word;max-width:60em}
code,.mono{font-family:ui-monospace,monospace;font-size:.85em;overflow-wrap:anywhere;word-break:break-all}
.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;flex-wrap:wrap;gap:1em}
.card{background:#fff;border:1px solid #ddd;padding:.6em .8em;width:300px}
.card .total{font-size:1.5em;font-weight:bold}.card svg{display:block;width:300px;height:60px;background:#f3f6fa}
.card rect{fill:#3d7cc9}.card.dead rect{fill:#c0392b}.axis{display:flex;justify-content:space-between;font-size:.7em;color:#666}
.error,.bad{color:#b00020}.ok{color:#087f23}.pending{color:#06c}.expired{color:#a00}
.wf{background:#fff;border:1px solid #ddd;width:100%}
.wf td{border:none;border-bottom:1px solid #eee;padding:.25em .5em}
.wf .label{width:42%;font-size:.9em}.wf .d1{padding-left:1.8em}
.track{position:relative;height:16px;background:#f3f6fa;min-width:400px}
.bar{position:absolute;top:2px;height:12px;min-width:3px;border-radius:2px;background:#3d7cc9}
.bar.attempt{background:#1d2b3a}.bar.model_call{background:#7b4bc9}.bar.tool_call{background:#2a9d8f}
.bar.intent{background:#e9a23b}.bar.suspended{background:#999}.bar.gap{background:repeating-linear-gradient(45deg,#ddd,#ddd 4px,#f3f3f3 4px,#f3f3f3 8px);border:1px dashed #aaa;top:3px;height:8px}
tr.err .label{color:#b00020;font-weight:bold}.bar.err{background:#b00020}
.ticks{position:relative;height:1.2em;font-size:.7em;color:#666;min-width:400px}.ticks span{position:absolute;transform:translateX(-50%)}
details summary{cursor:pointer;color:#555;font-size:.8em}
.notice{background:#eef7ee;border:1px solid #9c9;padding:.6em}
</style></head>
<body>
<nav><span class="brand">beamagents</span>
{{if .HasStore}}<a href="/">Overview</a><a href="/dead_letters">Dead letters</a><a href="/spend">Spend</a><a href="/canary">Canary</a>{{end}}{{if .HasRehearsal}}<a href="/rehearsal">Rehearsal</a>{{end}}<a href="/approvals">Approvals</a>
{{if .HasStore}}<form method="get" action="/search"><input name="q" id="q" placeholder="entity key, intent id or trace id"> <button id="search">Search</button></form>{{end}}
<span>{{if .Who}}signed in as <b id="who">{{.Who}}</b>{{else if .CanAct}}<a href="/signin?next={{.Path}}" id="signin">sign in to act</a>{{end}}</span>
</nav>
<main>{{template "content" .}}</main>
<script nonce="{{.Nonce}}">
(function(){
  if(!window.EventSource||document.body.dataset.static)return;
  var v=null,es=new EventSource('/events');
  es.onmessage=function(e){
    if(v!==null&&e.data!==v&&!document.querySelector('input[type=checkbox]:checked')){location.reload();}
    v=e.data;
  };
})();
</script>
</body></html>`

var pagesHTML = map[string]string{
	"error": `{{define "content"}}<h1>Refused ({{.Data.Status}})</h1><p id="error">{{text .Data.Message}}</p><p><a href="/">Back</a></p>{{end}}`,

	"overview": `{{define "content"}}{{$o := .Data.O}}
<h1>Overview</h1>
<p>{{$o.Entities}} entity keys · {{$o.SuspendedTotal}} suspended{{if $o.Malformed}} · <span class="bad" id="malformed">{{$o.Malformed}} records did not decode</span>{{end}}{{if $o.Skipped}} · <span class="bad" id="skipped">{{$o.Skipped}} records were too long to read (the console's log names them)</span>{{end}}</p>
<div class="cards" id="chart">{{range .Data.Series}}
<div class="card{{if eq .ID "dead_letters"}} dead{{end}}" id="series-{{.ID}}"><div>{{.Name}}</div><div class="total" data-total="{{.Total}}">{{.Total}}</div>
<svg viewBox="0 0 300 60" preserveAspectRatio="none" role="img" aria-label="{{.Name}} over time">{{range .Bars}}<rect x="{{num .X}}" y="{{num .Y}}" width="{{num .W}}" height="{{num .H}}"><title>{{.Title}}</title></rect>{{end}}</svg>
<div class="axis"><span>{{.From}}</span><span>max {{.Max}}</span><span>{{.To}}</span></div></div>{{end}}
</div>
<h2>Dead letters by reason</h2>
<table id="reasons"><tr><th>Reason</th><th>Count</th></tr>
{{range $o.Reasons}}<tr data-reason="{{.Reason}}"><td><a href="/dead_letters#reason-{{.Reason}}">{{text .Reason}}</a></td><td class="num">{{.Count}}</td></tr>
{{else}}<tr><td colspan="2">No dead letters.</td></tr>{{end}}</table>
<h2>Suspended keys</h2>
<table id="suspended"><tr><th>Entity</th><th>Activation</th><th>Since</th><th>Waiting for</th><th>Deadline</th></tr>
{{range $o.Suspended}}<tr><td><a href="{{keyPath .Key}}">{{key .Key}}</a></td><td class="num">{{.Seq}}</td><td>{{time .Since}}</td>
<td>{{if .Intent}}{{.Intent.GetKind}} {{text .Intent.GetToolName}} <code>{{.IntentID}}</code>{{else}}<code>{{.IntentID}}</code>{{end}}</td><td>{{time .Deadline}}</td></tr>
{{else}}<tr><td colspan="5">No key is suspended.</td></tr>{{end}}</table>
{{if gt $o.SuspendedTotal (len $o.Suspended)}}<p>… and {{$o.SuspendedTotal}} in all.</p>{{end}}
{{end}}`,

	"spend": `{{define "content"}}{{$s := .Data.S}}
<h1>Spend</h1>
<p id="spend-totals">{{$s.Totals.Calls}} model calls ({{$s.Totals.CacheHits}} from the replay cache) · {{$s.Totals.InputTokens}} input tokens (<span id="spend-cached">{{$s.Totals.CachedInputTokens}}</span> of them read from a provider's prompt cache) and {{$s.Totals.OutputTokens}} output tokens · cost <b id="spend-cost">{{money $s.Totals.Cost}}</b> {{$s.Currency}}{{if $s.Totals.Unpriced}} · <span class="bad" id="unpriced">{{$s.Totals.Unpriced}} calls of unpriced models</span>{{end}}</p>
{{if not .Data.Priced}}<p id="no-prices">No price table: start the console with --prices FILE to see costs.</p>{{end}}
{{range $t := spendTables $s}}<h2>By {{$t.Title}}</h2>
<table id="spend-{{$t.ID}}"><tr><th>{{$t.Title}}</th><th>Calls</th><th>Cache hits</th><th>Input tokens</th><th>Cached input</th><th>Output tokens</th><th>Cost</th><th>Unpriced</th></tr>
{{range $t.Rows}}<tr>{{if eq $t.ID "hour"}}<td>{{time .AtMs}}</td>{{else if eq $t.ID "entity"}}<td><a href="{{keyPath .Key}}">{{key .Key}}</a></td>{{else}}<td>{{if .Name}}{{text .Name}}{{else}}<i>none</i>{{end}}</td>{{end}}<td class="num">{{.Calls}}</td><td class="num">{{.CacheHits}}</td><td class="num">{{.InputTokens}}</td><td class="num">{{.CachedInputTokens}}</td><td class="num">{{.OutputTokens}}</td><td class="num">{{money .Cost}}</td><td class="num">{{.Unpriced}}</td></tr>
{{else}}<tr><td colspan="8">No model calls.</td></tr>{{end}}</table>{{end}}
{{if gt $s.Entities (len $s.ByEntity)}}<p>The {{len $s.ByEntity}} costliest of {{$s.Entities}} entity keys.</p>{{end}}
{{end}}`,

	"entity": `{{define "content"}}{{$e := .Data}}
<h1>Entity <span id="entity-key" class="mono">{{key $e.Key}}</span></h1>
{{if not $e.Known}}<p id="unknown">No output of this key was ingested.</p>{{else}}
<p>Status: <b id="status">{{or $e.Status "—"}}</b>{{with $e.Suspended}} — suspended in activation {{.Seq}} on {{if .Intent}}{{.Intent.GetKind}} {{text .Intent.GetToolName}}{{end}} <code>{{.IntentID}}</code>, deadline {{time .Deadline}}{{end}}</p>
<h2>Activations</h2>
<table id="activations"><tr><th>Seq</th><th>Started</th><th>Status</th><th>Model calls</th><th>Tools</th><th>Trace</th></tr>
{{range $e.Activations}}<tr data-seq="{{.Seq}}"><td class="num">{{.Seq}}</td><td>{{time .StartMs}}</td><td class="{{if .Errors}}error{{end}}">{{or .Status "—"}}{{range .Errors}} <span class="error">{{text .}}</span>{{end}}</td>
<td class="num">{{.ModelCalls}}</td><td>{{range .Tools}}<span class="tool">{{text .}}</span> {{end}}</td><td><a class="trace" href="{{tracePath .TraceID}}">{{hex .TraceID}}</a></td></tr>
{{else}}<tr><td colspan="6">No trace events.</td></tr>{{end}}</table>
<h2>Latest snapshot</h2>
{{with $e.Snapshot}}<p id="snapshot">activation counter {{.GetSeq}}, taken {{time .GetSnapshotAtMs}}</p>
<table><tr><th>Memory key</th><th>Value</th></tr>{{range .GetMemory.GetEntries}}<tr><td class="mono">{{text .GetKey}}</td><td>{{memValue .GetValue}}</td></tr>{{else}}<tr><td colspan="2">No memory.</td></tr>{{end}}</table>
{{with .GetContinuation}}<p>Suspended at step {{.GetStepIndex}}, pending {{range .GetPendingIntentIds}}<code>{{.}}</code> {{end}}, deadline {{time .GetDeadlineMs}}, escalations {{.GetEscalations}}</p>{{end}}
{{range .GetPending}}<p>Pending intent <code>{{.GetIntentId}}</code> {{.GetKind}} {{text .GetToolName}}</p>{{end}}
{{else}}<p>No snapshot (snapshots are written on export requests).</p>{{end}}
<h2>Intents</h2>
<table id="intents"><tr><th>Intent</th><th>Kind</th><th>Tool</th><th>Arguments</th><th>Attempt</th><th>Expires</th></tr>
{{range $e.Intents}}<tr><td><code>{{.GetIntentId}}</code></td><td>{{.GetKind}}</td><td>{{text .GetToolName}}</td><td><code>{{text .GetArgsJson}}</code></td><td class="num">{{.GetAttempt}}</td><td>{{time .GetExpiresAtMs}}</td></tr>
{{else}}<tr><td colspan="6">No intents.</td></tr>{{end}}</table>
<h2>Final replies</h2>
<table id="finals"><tr><th>Seq</th><th>Case</th><th>Message</th></tr>
{{range $e.Finals}}<tr><td class="num">{{.GetSeq}}</td><td>{{text .GetCaseId}}</td><td><code>{{final .}}</code></td></tr>{{else}}<tr><td colspan="3">No final replies.</td></tr>{{end}}</table>
<h2>Dead letters</h2>
<table id="entity-dead"><tr><th>Reason</th><th>Time</th><th>Detail</th></tr>
{{range $e.DeadLetters}}<tr><td class="error">{{text .Record.GetReason}}</td><td>{{time .Record.GetEventTimeMs}}</td><td>{{text .Record.GetDetail}}</td></tr>{{else}}<tr><td colspan="3">No dead letters.</td></tr>{{end}}</table>
{{end}}
{{with $e.LongTerm}}<h2>Long-term memory</h2>
{{with .Error}}<p class="error" id="long-term-error">{{text .}}</p>{{end}}
{{range .Namespaces}}<h3>Namespace <span class="mono">{{text .Name}}</span></h3>
<table class="long-term" data-namespace="{{.Name}}"><tr><th>Key</th><th>Value</th><th>Written by activation</th></tr>
{{range .Entries}}<tr><td class="mono">{{text .Key}}</td><td>{{memValue .Value}}</td><td class="num">{{.Seq}}</td></tr>{{end}}</table>
{{if .More}}<p>The first {{len .Entries}} entries are listed.</p>{{end}}
{{else}}{{if not .Error}}<p id="long-term-none">No long-term memory.</p>{{end}}{{end}}
{{if .More}}<p>The first {{len .Namespaces}} namespaces are listed.</p>{{end}}{{end}}{{end}}`,

	"trace": `{{define "content"}}{{$w := .Data}}
<h1>Trace <span class="mono" id="trace-id">{{$w.TraceID}}</span></h1>
{{if not $w.Rows}}<p id="unknown">No event of this trace was ingested.</p>{{else}}
<p>Entity <a id="trace-entity" href="{{keyPath $w.Key}}">{{key $w.Key}}</a>, activation {{$w.Seq}}, {{time $w.StartMs}} to {{time $w.EndMs}}{{if $w.HasError}} · <span class="error" id="has-error">errors</span>{{end}}</p>
<table class="wf" id="waterfall" data-start="{{$w.StartMs}}" data-end="{{$w.EndMs}}">
<tr><td class="label"></td><td><div class="ticks">{{range $w.Ticks}}{{if .Last}}<span style="right:0;transform:none">{{.Label}}</span>{{else}}<span style="left:{{pct .Left}}%">{{.Label}}</span>{{end}}{{end}}</div></td></tr>
{{range $i, $r := $w.Rows}}<tr class="row {{$r.Kind}}{{if $r.Error}} err{{end}}" data-kind="{{$r.Kind}}" data-start="{{$r.StartMs}}" data-end="{{$r.EndMs}}">
<td class="label d{{$r.Depth}}">{{text $r.Label}}{{if $r.Attrs}}<details><summary>attributes</summary><table>{{range $r.Attrs}}<tr><td class="mono">{{text (index . 0)}}</td><td class="mono">{{text (index . 1)}}</td></tr>{{end}}</table></details>{{end}}</td>
<td><div class="track"><div class="bar {{$r.Kind}}{{if $r.Error}} err{{end}}" id="bar-{{$i}}" style="left:{{pct $r.Left}}%;width:{{pct $r.Width}}%" title="{{time $r.StartMs}} – {{time $r.EndMs}}"></div></div></td></tr>
{{end}}</table>{{end}}{{end}}`,

	"dead_letters": `{{define "content"}}
<h1>Dead letters</h1>
{{$act := and .Data.Redrive .Token}}
{{if not .Data.Redrive}}<p>Redrive is off: start the console with --redrive_dir or --redrive_topic.</p>{{else if not .Who}}<p>Redriving needs an approver identity{{if .CanAct}}: <a href="/signin?next=/dead_letters">sign in</a>{{end}}.</p>{{end}}
{{if $act}}<form method="post" action="/dead_letters/redrive" id="redrive-form"><input type="hidden" name="csrf" value="{{.Token}}">{{end}}
{{range .Data.Groups}}<h2 id="reason-{{.Reason}}">{{text .Reason}} <small>({{.Count}})</small>
{{if $act}}<button name="reason" value="{{.Reason}}" class="redrive-reason">Redrive every {{text .Reason}}</button>{{end}}</h2>
<table class="dead" data-reason="{{.Reason}}"><tr>{{if $act}}<th></th>{{end}}<th>Entity</th><th>Time</th><th>Detail</th><th>Input</th></tr>
{{range .Listed}}<tr id="dl-{{hex .ID}}">{{if $act}}<td>{{if redrivable .Record}}<input type="checkbox" name="id" value="{{hex .ID}}" id="pick-{{hex .ID}}">{{else}}—{{end}}</td>{{end}}
<td>{{if .Record.GetEntityKey}}<a href="{{keyPath .Record.GetEntityKey}}">{{key .Record.GetEntityKey}}</a>{{else}}—{{end}}</td><td>{{time .Record.GetEventTimeMs}}</td>
<td class="error">{{text .Record.GetDetail}}</td><td><code>{{or (input .Record) "—"}}</code></td></tr>{{end}}
</table>{{if gt .Count (len .Listed)}}<p>The latest {{len .Listed}} of {{.Count}} are listed.</p>{{end}}
{{else}}<p>No dead letters.</p>{{end}}
{{if $act}}<p><button id="redrive-chosen">Redrive the chosen</button></p></form>{{end}}
<h2>Recent actions</h2>
<table id="actions"><tr><th>Time</th><th>Who</th><th>What</th><th>Detail</th></tr>
{{range .Data.Actions}}<tr><td>{{time .AtMs}}</td><td>{{text .Who}}</td><td>{{text .What}}</td><td>{{text .Detail}}</td></tr>{{else}}<tr><td colspan="4">None.</td></tr>{{end}}</table>
{{end}}`,

	"redriven": `{{define "content"}}<h1>Redriven</h1>
<p class="notice" id="redrive-result">{{.Data.Envelopes}} envelopes of {{.Data.Chosen}} chosen dead letters written to <code id="redrive-where">{{text .Data.Where}}</code>.</p>
<p><a href="/dead_letters">Back to the dead letters</a></p>{{end}}`,

	"search": `{{define "content"}}<h1>Search</h1>
{{if .Data.Q}}<p id="no-match">No trace, intent or entity key is exactly <code>{{text .Data.Q}}</code>.</p>{{end}}
{{if .Data.Keys}}<h2>Entity keys starting so</h2><ul id="matches">{{range .Data.Keys}}<li><a href="{{keyPath .}}">{{key .}}</a></li>{{end}}</ul>{{end}}{{end}}`,

	"approvals": `{{define "content"}}
<h1>Approvals</h1>
{{if .Data.Here}}
{{if not .Who}}<p>Deciding needs an approver identity{{if .CanAct}}: <a href="/signin?next=/approvals">sign in</a>{{end}}.</p>{{end}}
<table id="approvals"><tr><th>Entity</th><th>Tool</th><th>Arguments</th><th>Deadline (UTC)</th><th>Escalations</th><th>State</th><th>Decision</th></tr>
{{range .Data.Rows}}<tr id="row-{{.ID}}" data-state="{{.State}}">
<td>{{if $.HasStore}}<a href="{{keyPath .Entity}}">{{key .Entity}}</a>{{else}}{{key .Entity}}{{end}}</td><td>{{text .Tool}}</td><td><code>{{text .Args}}</code></td><td>{{.Deadline}}</td><td>{{.Escalations}}</td>
<td class="state {{if .Open}}pending{{end}}{{if eq .State "expired"}}expired{{end}}">{{text .State}}</td>
<td>{{if and .Open $.Token}}<form method="post" action="/approvals/decide">
<input type="hidden" name="intent_id" value="{{.ID}}"><input type="hidden" name="csrf" value="{{$.Token}}">
<button name="decision" value="approve" id="approve-{{.ID}}">Approve</button>
<button name="decision" value="reject" id="reject-{{.ID}}">Reject</button>
</form>{{else}}—{{end}}</td></tr>
{{else}}<tr><td colspan="7">No approvals.</td></tr>{{end}}
</table>
{{else}}
<p id="elsewhere">Approvals are decided in the console of the effector that holds them (<code>beamagents effector --console</code>, or <code>beamagents demo --live</code>). The keys waiting for one, from the outputs:</p>
<table id="waiting"><tr><th>Entity</th><th>Tool</th><th>Intent</th><th>Deadline</th></tr>
{{range .Data.Waiting}}<tr><td><a href="{{keyPath .Key}}">{{key .Key}}</a></td><td>{{text .Intent.GetToolName}}</td><td><code>{{.IntentID}}</code></td><td>{{time .Deadline}}</td></tr>
{{else}}<tr><td colspan="4">No key waits for an approval.</td></tr>{{end}}</table>
{{end}}{{end}}`,
}
