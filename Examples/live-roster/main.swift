// live-roster: four tasks edit one BasicDataSource at once while three views and a logging service follow it.
//
//   swift run live-roster
//
// Each view replays every batch on a headless ReferenceListView, which throws wherever UIKit would
// crash; the logging service only reads the batches' summaries. At the end every subscriber must show
// exactly the source's snapshot.

import Foundation
import SimpleSource
import SimpleSourceTesting

struct Employee: Identifiable, Equatable, Sendable {
  var id: String
  var name: String
  var title: String
}

typealias Department = Section<String, Employee>

func describe(_ batch: UpdateBatch<Department>) -> String {
  let items = batch.changeset.itemChanges
  let sections = batch.changeset.sectionChanges
  var parts: [String] = []
  if !sections.inserts.isEmpty { parts.append("\(sections.inserts.count) department(s) opened") }
  if !sections.deletes.isEmpty { parts.append("\(sections.deletes.count) closed") }
  if !sections.updates.isEmpty { parts.append("\(sections.updates.count) renamed") }
  if !items.inserts.isEmpty { parts.append("\(items.inserts.count) hired") }
  if !items.deletes.isEmpty { parts.append("\(items.deletes.count) left") }
  if !items.moves.isEmpty { parts.append("\(items.moves.count) moved") }
  if !items.updates.isEmpty { parts.append("\(items.updates.count) updated") }
  return "v\(batch.from)→v\(batch.to)\(batch.isComposed ? " (composed)" : ""): "
    + parts.joined(separator: ", ")
}

let roster = try BasicDataSource(sections: [
  Department(
    id: "eng", header: "Engineering",
    items: [
      Employee(id: "ada", name: "Ada", title: "Engineer"),
      Employee(id: "grace", name: "Grace", title: "Engineer"),
    ]),
  Department(id: "ops", header: "Operations", items: [Employee(id: "ken", name: "Ken", title: "Operator")]),
  Department(id: "sales", header: "Sales", items: [Employee(id: "don", name: "Don", title: "Rep")]),
])

// Three views and a logging service subscribe before the edits start.
let views = [
  ("table view", await BatchRecorder(await roster.subscribe(), refreshStyle: .reconfigure)),
  ("collection view", await BatchRecorder(await roster.subscribe(), refreshStyle: .reload)),
  (
    "paced view (one batch per frame)",
    await BatchRecorder(
      await roster.subscribe(pacing: framePacing()))
  ),
]
let logger = await BatchRecorder(await roster.subscribe())

// Four tasks edit at once: hiring, promotions, transfers and reorganisation.
print("Editing the roster from four tasks…")
await withTaskGroup(of: Void.self) { group in
  group.addTask {
    for number in 1...12 {
      _ = try? await roster.appendItems(
        [Employee(id: "hire\(number)", name: "Hire \(number)", title: "Engineer")],
        toSection: number % 2 == 0 ? "eng" : "ops")
    }
  }
  group.addTask {
    _ = try? await roster.replaceItem(Employee(id: "ada", name: "Ada", title: "Senior Engineer"))
    _ = try? await roster.replaceItem(Employee(id: "grace", name: "Grace", title: "Principal Engineer"))
    // A promotion for someone who does not work here is a typed error, and changes nothing.
    do {
      try await roster.replaceItem(Employee(id: "nobody", name: "Nobody", title: "CEO"))
    } catch {
      print("rejected: \(error)")
    }
  }
  group.addTask {
    _ = try? await roster.moveItem("ken", toSection: "eng")
    _ = try? await roster.moveItem("grace", before: "ada")
    _ = try? await roster.deleteItems(["don"])
  }
  group.addTask {
    _ = try? await roster.updateSection(Department(id: "ops", header: "Operations & Infrastructure"))
    _ = try? await roster.moveSection("ops", before: "eng")
    _ = try? await roster.deleteSections(["sales"])
    _ = try? await roster.appendSections([Department(id: "research", header: "Research", items: [])])
  }
}

// Tests and programs await the source instead of sleeping.
await roster.settled()
let final = await roster.snapshot
print("The source is at version \(await roster.version) after every edit.\n")

var allMatch = true
for (name, view) in views {
  await view.showing(final)
  let batches = await view.batches
  let violations = await view.violations
  let matches = await view.view.shows(final.sections)
  allMatch = allMatch && matches && violations.isEmpty
  print(
    "\(name): \(batches.count) batch(es), \(batches.reduce(0) { $0 + $1.changeset.stages.count }) UIKit stage(s)"
  )
  for batch in batches { print("  " + describe(batch)) }
  print(
    "  shows the source exactly: \(matches ? "yes" : "NO"); contract violations: \(violations.isEmpty ? "none" : "\(violations)")"
  )
}
for (_, view) in views { await view.cancel() }

// The logging service only reads summaries; it too ends showing the source.
await logger.showing(final)
print("logging service:")
for batch in await logger.batches { print("  [log] " + describe(batch)) }
let loggerViolations = await logger.violations
let loggerMatches = await logger.view.shows(final.sections)
allMatch = allMatch && loggerViolations.isEmpty && loggerMatches
await logger.cancel()

print("\nFinal roster:")
for department in final.sections {
  print("  \(department.header ?? department.id)")
  for employee in department.items { print("    \(employee.name), \(employee.title)") }
}
guard allMatch else {
  print("error: a subscriber does not match the source")
  exit(1)
}
print("\nEvery view matches the source, and every batch passed UIKit's rules.")

/// One batch per frame where the platform has `Clock` (iOS 16, macOS 13, tvOS 16, watchOS 9); every batch
/// at once on older systems.
func framePacing() -> Pacing {
  if #available(iOS 16, macOS 13, tvOS 16, watchOS 9, *) {
    return .interval(.milliseconds(16), clock: ContinuousClock())
  }
  return .immediate
}
