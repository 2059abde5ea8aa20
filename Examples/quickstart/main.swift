import SimpleSource
import SimpleSourceTesting

let old = snapshot("A: a b c d | B: e f | C: g")
let new = snapshot("C: g h | A: d a' c | D: f")
let changeset = Changeset(from: old, to: new)
for stage in changeset.stages {
  print(stage.kind, stage.batchUpdate())
}
var view = ReferenceListView(old)
do {
  try view.apply(changeset)
  print("ok", view.itemIDs, view.warnings)
} catch {
  print("error", error)
}
