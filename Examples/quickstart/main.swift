// quickstart: diff two snapshots of a small employee list and replay the stages on a headless list view.
//
//   swift run quickstart

import Foundation
import SimpleSource
import SimpleSourceTesting

struct Employee: Identifiable, Equatable, Sendable {
  var id: String
  var name: String
  var title: String
}

typealias Department = Section<String, Employee>

let before = try Snapshot([
  Department(
    id: "eng", header: "Engineering",
    items: [
      Employee(id: "ada", name: "Ada", title: "Engineer"),
      Employee(id: "grace", name: "Grace", title: "Engineer"),
      Employee(id: "linus", name: "Linus", title: "Intern"),
    ]),
  Department(
    id: "ops", header: "Operations",
    items: [
      Employee(id: "ken", name: "Ken", title: "Operator"),
      Employee(id: "barbara", name: "Barbara", title: "Lead"),
    ]),
  Department(
    id: "sales", header: "Sales",
    items: [
      Employee(id: "don", name: "Don", title: "Rep")
    ]),
])

// Linus is promoted and moves to the end, Ken transfers to Engineering, Don leaves (and Sales closes),
// Margaret is hired, Operations is renamed and moves to the top.
let after = try Snapshot([
  Department(
    id: "ops", header: "Operations & Infrastructure",
    items: [
      Employee(id: "barbara", name: "Barbara", title: "Lead"),
      Employee(id: "margaret", name: "Margaret", title: "Engineer"),
    ]),
  Department(
    id: "eng", header: "Engineering",
    items: [
      Employee(id: "ada", name: "Ada", title: "Engineer"),
      Employee(id: "ken", name: "Ken", title: "Operator"),
      Employee(id: "grace", name: "Grace", title: "Engineer"),
      Employee(id: "linus", name: "Linus", title: "Engineer"),
    ]),
])

let changeset = Changeset(from: before, to: after)

print("What changed, by id (old → new position):")
for change in changeset.sectionChanges.deletes { print("  section deleted  \(change)") }
for change in changeset.sectionChanges.inserts { print("  section inserted \(change)") }
for change in changeset.sectionChanges.moves { print("  section moved    \(change)") }
for change in changeset.sectionChanges.updates { print("  section renamed  \(change)") }
for change in changeset.itemChanges.deletes { print("  item deleted     \(change)") }
for change in changeset.itemChanges.inserts { print("  item inserted    \(change)") }
for change in changeset.itemChanges.moves { print("  item moved       \(change)") }
for change in changeset.itemChanges.updates { print("  item updated     \(change)") }

print("\nWhat a table view performs, one performBatchUpdates per stage:")
for (number, stage) in changeset.stages.enumerated() {
  print("  \(number + 1). \(stage.kind): \(stage.calls(refreshing: .reconfigure))")
}

// ReferenceListView applies each stage with UIKit's rules and throws where UIKit would crash.
var view = ReferenceListView(before)
try view.apply(changeset, refreshing: .reconfigure)
print("\nThe reference view accepted every stage and now shows:")
for section in view.sections {
  print("  \(section.section.header ?? "")")
  for cell in section.cells { print("    \(cell.item.name), \(cell.item.title)") }
}
guard view.shows(after.sections), view.warnings.isEmpty else {
  print("error: the view does not show the new snapshot")
  exit(1)
}
print("It matches the new snapshot exactly, with no needless refreshes.")
