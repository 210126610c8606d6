# Helpers for script rules (category script), available as
# data.stepdoctor.lib.script: `import data.stepdoctor.lib.script as slib`.
# They read only their arguments, so they type-check for any input.
package stepdoctor.lib.script

import rego.v1

# loc(x) is the finding location of a script fact x with a position
# (a call, loop, DataLoader, optimizer, profiler, use or value).
loc(x) := {"line": x.line, "column": x.column, "end_line": x.end_line, "end_column": x.end_column}

# literal(v, want) holds when argument value v is the literal want.
literal(v, want) if {
	v.present
	v.kind in {"bool", "int", "float", "string"}
	v.value == want
}

# keyword(c, name) is call c's keyword argument name, or an absent value
# (so that `not slib.literal(slib.keyword(c, "x"), true)` holds when x
# was not passed; a missing key inside `not f(...)` would be undefined).
keyword(c, name) := object.get(c.keywords, name, {"present": false, "kind": "", "value": null, "text": ""})

# absent_or(v, want) holds when argument v was not passed or is the literal want.
absent_or(v, _) if not v.present

absent_or(v, want) if literal(v, want)
