// employees: the README's walkthrough, live. A table of employees by department, drawn in the terminal,
// while four tasks hire, fire, transfer and rename at once, and a user drags a row.
//
//   swift run employees            # animated in a terminal; plain frames when piped
//   swift run employees --quick    # no pauses
//
// The "table" is a ReferenceListViewHost: a headless list view that applies every batch with UIKit's
// rules and dequeues cells through the view data source exactly as UITableView does. The app code below
// (model, data source, factory, view data source) is what an iOS app writes; only the view differs.

import Foundation
import SimpleSource
import SimpleSourceTesting

// MARK: - The data (README: "The Data")

struct Employee: Identifiable, Equatable, Sendable {
  var id: String
  var name: String
}

struct Department: SectionType {
  var id: String
  var name: String
  var items: [Employee]

  /// A renamed department refreshes its header; its employees are compared on their own.
  func isContentEqual(to other: Department) -> Bool { name == other.name }
}

let departments = [
  Department(id: "eng", name: "Engineering", items: ["Alice", "Christine", "Diana"].map(employee)),
  Department(id: "sales", name: "Sales", items: ["Bob", "Eliza", "Frank"].map(employee)),
  Department(id: "design", name: "Design", items: ["Gus", "Hana"].map(employee)),
]

func employee(_ name: String) -> Employee { Employee(id: name.lowercased(), name: name) }

// MARK: - The view: rows that remember what changed

/// A row of the terminal table; the configuration closure gives it its employee.
final class EmployeeCell: ReferenceReusableView {
  var employee: Employee?
}

typealias Table = ReferenceListViewHost<Department>

/// Draws the table as text: a header per department, a row per employee, with a mark on rows that
/// changed since the last frame, and departures under the department they left.
@MainActor
final class TerminalRenderer {
  static let legend = "  legend: + hired   → transferred   ~ renamed   ↕ dragged by the user   - left"
  private var lastDepartment: [String: String] = [:]
  private var lastNames: [String: String] = [:]
  private(set) var frames = 0
  /// The version the last frame showed.
  var shownVersion = 0
  /// Said with the next frame.
  var note = ""
  /// The employee the user dragged, marked in the next frame.
  var dragged: String?
  let interactive = isatty(STDOUT_FILENO) == 1 && !CommandLine.arguments.contains("--quick")

  func draw(_ table: Table, _ dataSource: ListViewDataSource<Department, Table>, caption: String) {
    let isFirstFrame = frames == 0
    frames += 1
    var lines: [String] = []
    var seen = Set<String>()
    var departed: [String: [String]] = [:]  // department id -> names of those who left it
    let shownDepartments = Set((0..<dataSource.numberOfSections).map { dataSource.section(at: $0).id })
    for (id, department) in lastDepartment where !isFirstFrame {
      if !(0..<dataSource.numberOfSections).contains(where: { section in
        (0..<dataSource.numberOfItems(inSection: section)).contains {
          dataSource.item(at: ItemPosition(section: section, item: $0)).id == id
        }
      }) {
        departed[shownDepartments.contains(department) ? department : "", default: []].append(
          lastNames[id] ?? id)
      }
    }
    for index in 0..<dataSource.numberOfSections {
      lines.append("  \(dataSource.headerTitle(inSection: index) ?? "")")
      let department = dataSource.section(at: index)
      for row in 0..<dataSource.numberOfItems(inSection: index) {
        guard let cell = table.cell(at: ItemPosition(section: index, item: row)) as? EmployeeCell,
          let employee = cell.employee
        else { continue }
        seen.insert(employee.id)
        let mark =
          if isFirstFrame { " " } else if employee.id == dragged { "↕" } else if lastNames[employee.id] == nil
          { "+" } else if lastDepartment[employee.id] != department.id {
            "→"
          } else if lastNames[employee.id] != employee.name { "~" } else { " " }
        lines.append("   \(mark) \(employee.name)")
        lastDepartment[employee.id] = department.id
        lastNames[employee.id] = employee.name
      }
      for name in departed[department.id, default: []].sorted() { lines.append("   - \(name) left") }
    }
    for name in departed["", default: []].sorted() { lines.append("   - \(name) left") }
    for id in lastNames.keys where !seen.contains(id) {
      lastNames[id] = nil
      lastDepartment[id] = nil
    }
    if !isFirstFrame && dragged != nil && seen.contains(dragged ?? "") { dragged = nil }
    let frame = (["frame \(frames): \(caption)\(note)", Self.legend] + lines).joined(separator: "\n")
    note = ""
    print(interactive ? "\u{1B}[2J\u{1B}[H" + frame : frame + "\n")
  }
}

// MARK: - Wiring, as in the README

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
@MainActor
func run() async throws {
  // The DataSource.
  let dataSource = try BasicDataSource(sections: departments)

  // The view, and the ViewFactory that makes its rows.
  let tableView = Table()
  let viewFactory = ViewFactory<Department, Table> { employee, view in "Cell" }
  viewFactory.registerCell(method: .class, reuseIdentifier: "Cell", in: tableView) {
    (cell: EmployeeCell, employee: Employee, indexPath: IndexPath) in
    cell.employee = employee
  }
  viewFactory.registerHeaderText { department, _ in department.name.uppercased() }

  // The ViewDataSource, with a custom update policy that animates, then draws a frame.
  let renderer = TerminalRenderer()
  let tableViewDataSource = ListViewDataSource(
    view: tableView, factory: viewFactory,
    update: .custom { context in
      context.performStages(refreshing: .reconfigure, animated: true)
      let batch = context.batch
      let count = batch.to.number - batch.from.number
      let caption =
        "v\(batch.from)→v\(batch.to), \(count) mutation\(count == 1 ? "" : "s") since the last frame"
      guard let table = context.view as? Table, let source = table.dataSource else { return }
      renderer.shownVersion = batch.to.number
      renderer.draw(table, source, caption: caption)
    })
  tableView.dataSource = tableViewDataSource
  tableViewDataSource.reorderingDelegate = dataSource  // one line: drag-and-drop reordering
  await tableViewDataSource.follow(dataSource)
  renderer.draw(tableView, tableViewDataSource, caption: "v0, the company as it starts")

  // Four tasks change the company at once. Each pauses between changes only so a person can watch.
  let pause: Duration = renderer.interactive ? .milliseconds(350) : .zero
  let newcomers = ["Ivan", "Judy", "Karl", "Lena", "Milo", "Nora", "Omar", "Pia"]
  let people = ["alice", "bob", "christine", "diana", "eliza", "frank", "gus", "hana"]
  let workers = Task.detached {
    await withTaskGroup(of: Void.self) { group in
      group.addTask {  // hiring
        for (index, name) in newcomers.enumerated() {
          _ = try? await dataSource.appendItems(
            [employee(name)], toSection: ["eng", "sales", "design"][index % 3])
          await nap(pause)
        }
      }
      group.addTask {  // firing
        for id in ["frank", "judy", "gus"] {
          await nap(pause)
          await nap(pause)
          _ = try? await dataSource.deleteItems([id])
        }
      }
      group.addTask {  // transfers
        for (index, id) in people.enumerated() {
          _ = try? await dataSource.moveItem(id, toSection: ["design", "eng", "sales"][index % 3])
          await nap(pause)
        }
      }
      group.addTask {  // renames, and one department renamed
        for id in ["alice", "bob", "diana"] {
          await nap(pause)
          if let current = await dataSource.snapshot.item(withID: id) {
            _ = try? await dataSource.replaceItem(Employee(id: id, name: current.name + " Smith"))
          }
        }
        _ = try? await dataSource.update { sections in
          if let index = sections.firstIndex(where: { $0.id == "design" }) {
            sections[index].name = "Product Design"
          }
        }
      }
    }
  }

  // Meanwhile the user drags the first row of the first department to the end of it. The writes above go
  // on during the drag; they are held back from the table while the finger is down, and none is lost.
  await nap(pause)
  tableView.beginInteractiveMove()
  await nap(pause)
  let first = tableViewDataSource.numberOfItems(inSection: 0)
  if first > 1 {
    let moving = tableViewDataSource.item(at: ItemPosition(section: 0, item: 0))
    renderer.note = " (the user dragged \(moving.name) down)"
    renderer.dragged = moving.id
    tableView.endInteractiveMove(
      movingItemAt: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: first - 1))
  } else {
    tableViewDataSource.endInteractiveMove()
  }

  await workers.value
  await tableViewDataSource.settled()
  await dataSource.settled()
  let final = await dataSource.snapshot
  await tableViewDataSource.showing(final)

  let shows = tableView.reference.shows(final.sections)
  print(
    """

    \(renderer.frames) frames showed v0→v\(renderer.shownVersion) of \(await dataSource.version) mutations \
    (the user's drag among them; a version no frame shows changed nothing on screen), \
    in \(tableView.batchCount) batch updates and \(tableViewDataSource.reloadCount) reloads.
    UIKit rule violations: \(tableView.errors.count). The table shows the data source exactly: \(shows).
    """)
  if !shows || !tableView.errors.isEmpty { exit(1) }
}

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func nap(_ pause: Duration) async {
  if pause > .zero { try? await Task.sleep(for: pause) }
}

if #available(iOS 16, macOS 13, tvOS 16, watchOS 9, *) {
  try await run()
} else {
  fatalError("employees needs macOS 13 or later (Duration, for the pauses between frames)")
}
