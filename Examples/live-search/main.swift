// live-search: a search field over an employee directory, filtering live while four tasks edit it.
//
//   swift run live-search           # type a search and press Enter; an empty line clears it; Ctrl-D quits
//   swift run live-search --demo    # types a few searches by itself, then checks the result
//
// The directory is a BasicDataSource; what the "table" shows is a ProjectedDataSource of it, whose
// projection the search field replaces. Every batch is applied to a ReferenceListView, which checks it
// with UIKit's rules, as a UITableView would apply it.

import Foundation
import SimpleSource
import SimpleSourceTesting

struct Person: Identifiable, Equatable, Sendable {
  var id: Int
  var name: String
}

typealias Team = Section<String, Person>

let names = [
  "engineering": ["Alice", "Christine", "Diana", "Anton", "Mei", "Oskar", "Priya"],
  "sales": ["Bob", "Eliza", "Frank", "Hannah", "Ivan", "Joanna"],
  "design": ["Gus", "Hana", "Kai", "Lena", "Marta"],
]
var nextID = 0
let teams = ["engineering", "sales", "design"].map { team in
  Team(
    id: team, header: team.capitalized,
    items: names[team, default: []].map { name in
      defer { nextID += 1 }
      return Person(id: nextID, name: name)
    })
}

/// Shows people whose name contains `text`, by name, hiding teams with nobody to show.
func search(_ text: String) -> Projection<Team> {
  Projection(
    where: { text.isEmpty || $0.name.localizedCaseInsensitiveContains(text) },
    sortedBy: { $0.name < $1.name },
    hidingEmptySections: true)
}

/// Four tasks hire, fire, transfer and rename, each a few times, while the user searches.
func edit(_ directory: BasicDataSource<Team>, seed: UInt64) async {
  await withTaskGroup(of: Void.self) { group in
    for writer in 0..<4 {
      group.addTask {
        var random = SeededGenerator(seed: seed &+ UInt64(writer))
        let newcomers = ["Ana", "Noor", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Vera"]
        for step in 0..<25 {
          // Drawn before the transaction, which runs on the directory's actor.
          let kind = Int.random(in: 0..<4, using: &random)
          let (pick, other) = (
            Int.random(in: 0..<1_000, using: &random), Int.random(in: 0..<1_000, using: &random)
          )
          let name = newcomers[other % newcomers.count]
          _ = try? await directory.update { teams in
            let team = pick % teams.count
            let count = teams[team].items.count
            switch kind {
            case 0: teams[team].items.append(Person(id: 1_000 * (writer + 1) + step, name: name))
            case 1 where count > 2: teams[team].items.remove(at: other % count)
            case 2 where count > 0:
              let person = teams[team].items.remove(at: other % count)
              teams[(team + 1) % teams.count].items.append(person)
            case 3 where count > 0: teams[team].items[other % count].name += "a"
            default: break
            }
          }
          await Task.yield()
        }
      }
    }
  }
}

/// Applies every batch of `subscription` to a reference table view; stops at the first rule broken.
actor Table {
  private(set) var view: ReferenceListView<Team>
  private(set) var batches = 0
  private(set) var failure: String?

  init(_ snapshot: Snapshot<Team>) { view = ReferenceListView(snapshot) }

  func follow(_ batches: AsyncStream<UpdateBatch<Team>>) async {
    for await batch in batches {
      do {
        for stage in batch.changeset.stages { try view.apply(stage, refreshing: .reconfigure) }
        self.batches += 1
      } catch {
        failure = "batch \(batch.from)→\(batch.to) rejected: \(error)"
        return
      }
    }
  }

  func render(query: String) -> String {
    var lines = ["search: \"\(query)\"   (\(batches) batches so far)"]
    for section in view.sections {
      lines.append("  \(section.section.header ?? "\(section.id)")")
      for cell in section.cells { lines.append("    \(cell.item.name)") }
    }
    if view.sections.isEmpty { lines.append("  nobody") }
    return lines.joined(separator: "\n")
  }
}

let demo = CommandLine.arguments.contains("--demo") || isatty(STDIN_FILENO) == 0
let directory = try BasicDataSource(sections: teams)
let visible = try await directory.projected(search(""))
let subscription = await visible.subscribe()
let table = Table(subscription.snapshot)
let following = Task { await table.follow(subscription.batches) }
let editors = Task { await edit(directory, seed: 7) }

/// Returns once every change made so far is in `visible` and applied to the table: `settled()` offers the
/// last batch to the table's loop, and `reached(_:)` waits until the loop has taken it.
func caughtUp() async {
  await visible.settled()
  _ = try? await subscription.reached(await visible.version)
}

var query = ""
if demo {
  for typed in ["a", "an", "ann", "an", "", "o", "os"] {
    query = typed
    try await visible.setProjection(search(query))
    await caughtUp()
    print(await table.render(query: query) + "\n")
  }
} else {
  print("Type a search and press Enter (an empty line clears it; Ctrl-D quits). Four tasks edit meanwhile.\n")
  print(await table.render(query: query))
  while let line = readLine() {
    query = line
    try await visible.setProjection(search(query))
    await caughtUp()
    print(await table.render(query: query))
  }
}

// The check: once the editors are done, the table shows exactly the directory filtered and sorted.
await editors.value
await caughtUp()
let expected = await directory.snapshot.sections.compactMap { team -> Team? in
  var shown = team
  shown.items = team.items.filter { query.isEmpty || $0.name.localizedCaseInsensitiveContains(query) }
    .sorted { $0.name < $1.name }
  return shown.items.isEmpty ? nil : shown
}
let final = await visible.snapshot
subscription.cancel()
await following.value
if let failure = await table.failure {
  print("FAILED: \(failure)")
  exit(1)
}
guard final.sections == expected, await table.view.shows(expected) else {
  print("FAILED: the table does not show the directory filtered by \"\(query)\"")
  exit(1)
}
print(
  "checked: \(await table.batches) batches, every one valid under UIKit's rules; the table shows the directory filtered by \"\(query)\""
)
