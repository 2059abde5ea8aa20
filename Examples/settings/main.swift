// settings: a settings screen and a form described in JSON, shown with cells that update themselves.
//
//   swift run settings            # commands: flip ID, slide ID VALUE, type ID TEXT, tap ID, open ID,
//                                 #           back, load FILE, quit
//   swift run settings --demo     # flips, slides, types and taps by itself, then checks the result
//
// The screen is settings.json, decoded into a `Screen` (a malformed file is a typed error naming its
// JSON path, and nothing shown changes). Each row is a `ListCell` registered by its cell kind; what the
// user does in a cell reaches the `cellAction` closure with the item and its current position, which
// writes the change to the source, whose batch updates the cell. "Show advanced settings" shows and hides
// a section through a projection of the source; "Profile" opens its child screen, a source of its own.

import Foundation
import SimpleSource
import SimpleSourceTesting

typealias Host = ReferenceListViewHost<ScreenSection>

/// A terminal row: renders the item as one line of text, and lets the "user" act on it.
final class TextCell: ReferenceReusableView, ListCell {
  var cellContext: CellContext?
  private(set) var item: ScreenItem?
  private(set) var line = ""

  func reset() { line = "" }

  func update(with item: ScreenItem) {
    self.item = item
    line = Self.render(item)
  }

  func flip() { send(.toggled(!(item?.content.isOn ?? false))) }
  func slide(to value: Double) { send(.slid(value)) }
  func type(_ text: String) { send(.textChanged(text)) }
  func tap() { send(.tapped) }

  static func render(_ item: ScreenItem) -> String {
    let content = item.content
    let title = content.title ?? ""
    let opens = item.child == nil ? "" : "  ›"
    switch item.cell {
    case .basic: return title + opens
    case .subtitle: return "\(title) — \(content.subtitle ?? "")\(opens)"
    case .leftDetail: return "\(content.detail ?? "")  \(title)\(opens)"
    case .rightDetail: return "\(title) ........ \(content.detail ?? "")\(opens)"
    case .toggle, .toggleWithSubtitle:
      let box = content.isOn == true ? "[x]" : "[ ]"
      return "\(box) \(title)" + (item.cell == .toggleWithSubtitle ? " — \(content.subtitle ?? "")" : "")
    case .slider, .sliderWithLabels:
      let (low, high) = (content.minimum ?? 0, content.maximum ?? 1)
      let value = content.value ?? low
      let knob = Int(((value - low) / max(high - low, .ulpOfOne) * 10).rounded())
      let bar = String(repeating: "-", count: knob) + "o" + String(repeating: "-", count: 10 - knob)
      let labels = item.cell == .sliderWithLabels ? ("\(low) ", " \(high)") : ("", "")
      return
        "\(title)  \(labels.0)|\(bar)|\(labels.1)  \(value.formatted(.number.precision(.fractionLength(0...2))))"
    case .textField: return "\(title): [\(content.text ?? content.placeholder ?? "")]"
    case .textView: return "«\(content.text ?? content.placeholder ?? "")»"
    case .button: return "( \(title) )"
    case .spinner: return "⠿ \(title)…"
    }
  }
}

/// One screen on the stack: its source, what the view follows, and the view.
@MainActor
final class Level {
  let title: String
  let source: BasicDataSource<ScreenSection>
  let host = Host()
  let view: ListViewDataSource<ScreenSection, Host>

  init(title: String, source: BasicDataSource<ScreenSection>) {
    self.title = title
    self.source = source
    let factory = ViewFactory<ScreenSection, Host> { item, _ in item.cell.rawValue }
    for kind in CellKind.allCases {
      factory.registerCell(TextCell.self, method: .class, reuseIdentifier: kind.rawValue, in: host)
    }
    view = ListViewDataSource(view: host, factory: factory, update: .animated())
    host.dataSource = view
  }

  /// The cell of the item `id`, as the view shows it now.
  func cell(_ id: String) -> TextCell? {
    view.position(ofShownItem: id).flatMap { host.cell(at: $0) as? TextCell }
  }

  func render() -> String {
    var lines = ["== \(title) =="]
    for (index, section) in view.sections.enumerated() {
      lines.append(section.header.map { "\($0.uppercased())" } ?? "")
      for item in 0..<section.items.count {
        let line = (host.cell(at: ItemPosition(section: index, item: item)) as? TextCell)?.line ?? "?"
        lines.append("  " + line)
      }
      if let footer = section.footer { lines.append("  (\(footer))") }
    }
    return lines.joined(separator: "\n")
  }
}

/// The screens the user has opened, and what their cells' actions do.
@MainActor
final class Settings {
  private(set) var stack: [Level] = []
  /// Every child screen opened, in order.
  private(set) var opened: [Level] = []
  /// The root's visible sections: everything but "advanced" unless "show-advanced" is on.
  private var visible: ProjectedDataSource<ScreenSection>?
  /// Writes started by cells, awaited before each render.
  private var writes: [Task<Void, Never>] = []

  var top: Level { stack[stack.count - 1] }

  static func projection(showingAdvanced: Bool) -> Projection<ScreenSection> {
    Projection(sectionsWhere: { showingAdvanced || $0.id != "advanced" })
  }

  /// Shows `screen` as the root, replacing whatever was shown.
  func show(_ screen: Screen) async throws {
    let source = try screen.dataSource()
    let showing =
      screen.sections.lazy.flatMap(\.items).first { $0.id == "show-advanced" }?.content.isOn == true
    let visible = try await source.projected(Self.projection(showingAdvanced: showing))
    let root = Level(title: screen.title ?? "Settings", source: source)
    wire(root)
    await root.view.follow(visible)
    self.visible = visible
    stack = [root]
  }

  private func wire(_ level: Level) {
    level.view.interactions.all.didSelect = { [unowned self] item, _ in
      if let child = item.child { self.writes.append(Task { try? await self.open(child) }) }
      return .deselect
    }
    level.view.interactions.all.cellAction = { [unowned self] action, item, _ in
      self.writes.append(Task { await self.perform(action, on: item, in: level) })
    }
  }

  /// A cell's action becomes a write to the source its screen shows.
  private func perform(_ action: CellAction, on item: ScreenItem, in level: Level) async {
    var changed = item
    switch action {
    case .toggled(let isOn): changed.content.isOn = isOn
    case .slid(let value): changed.content.value = (value * 100).rounded() / 100
    case .textChanged(let text): changed.content.text = text
    case .tapped where item.id == "save":
      let name = await level.source.snapshot.sections.flatMap(\.items).first { $0.id == "name" }?.content.text
      _ = try? await level.source.update { sections in
        for section in sections.indices {
          for row in sections[section].items.indices where sections[section].items[row].id == "status" {
            sections[section].items[row].content.title = "Saved: \(name ?? "nobody")"
          }
        }
      }
      return
    case .tapped, .custom: return
    }
    do {
      try await level.source.replaceItem(changed)
      if item.id == "show-advanced", case .toggled(let isOn) = action {
        try await visible?.setProjection(Self.projection(showingAdvanced: isOn))
      }
    } catch {
      print("could not apply \(action) to \(item.id): \(error)")
    }
  }

  func open(_ child: Screen) async throws {
    let level = Level(title: child.title ?? "", source: try child.dataSource())
    wire(level)
    await level.view.follow(level.source)
    stack.append(level)
    opened.append(level)
  }

  func back() { if stack.count > 1 { stack.removeLast() } }

  /// Waits until every write has reached the source and the view shows it.
  func settle() async {
    while !writes.isEmpty {
      let pending = writes
      writes = []
      for write in pending { await write.value }
    }
    if let visible { await visible.settled() }
    for level in stack {
      await level.source.settled()
      await level.view.showing(
        stack.first === level ? await visible!.snapshot : await level.source.snapshot)
    }
  }
}

func loadScreen(_ url: URL) throws -> Screen {
  try Screen(json: Data(contentsOf: url))
}

let settings = Settings()
let bundled = try loadScreen(Bundle.module.url(forResource: "settings", withExtension: "json")!)
let demo = CommandLine.arguments.contains("--demo") || isatty(STDIN_FILENO) == 0
try await settings.show(bundled)

/// Runs one command of the user's; returns false to quit.
@MainActor
func run(_ command: String) async -> Bool {
  let words = command.split(separator: " ", maxSplits: 2).map(String.init)
  guard let verb = words.first else { return true }
  let level = settings.top
  let id = words.count > 1 ? words[1] : ""
  let cell = level.cell(id)
  switch verb {
  case "flip": cell?.flip()
  case "slide": cell?.slide(to: Double(words.count > 2 ? words[2] : "") ?? 0)
  case "type": cell?.type(words.count > 2 ? words[2] : "")
  case "tap": cell?.tap()
  case "open":
    if let position = level.view.position(ofShownItem: id) { level.host.tap(at: position) }
  case "back": settings.back()
  case "load":
    do {
      try await settings.show(try loadScreen(URL(fileURLWithPath: id)))
    } catch {
      print("not loaded, nothing changed: \(error)")
    }
  case "quit": return false
  default: print("commands: flip ID, slide ID VALUE, type ID TEXT, tap ID, open ID, back, load FILE, quit")
  }
  if cell == nil, ["flip", "slide", "type", "tap"].contains(verb) { print("no row '\(id)' on this screen") }
  await settings.settle()
  print(settings.top.render() + "\n")
  return true
}

if demo {
  print(settings.top.render() + "\n")
  for command in [
    "flip show-advanced", "slide brightness 0.8", "flip wifi", "open profile", "type name Ada Lovelace",
    "tap save", "back", "flip show-advanced",
  ] {
    print("> " + command)
    _ = await run(command)
  }
  // A malformed screen is refused with its JSON path; what is shown stays.
  let broken = FileManager.default.temporaryDirectory.appendingPathComponent("broken-settings.json")
  try Data(#"{ "sections": [ { "id": "a", "items": [ { "id": "x", "cell": "toggel" } ] } ] }"#.utf8)
    .write(to: broken)
  print("> load \(broken.lastPathComponent)")
  _ = await run("load \(broken.path)")
} else {
  print(settings.top.render() + "\n")
  while let line = readLine(), await run(line) {}
}

// The check: the sources hold what the user did, and the views show exactly what they should.
if demo {
  let root = settings.stack[0]
  let rows = Dictionary(
    uniqueKeysWithValues: await root.source.snapshot.sections.flatMap(\.items).map { ($0.id, $0.content) })
  let shownSections = root.view.sections.map(\.id)
  var failures: [String] = []
  if rows["wifi"]?.isOn != false { failures.append("wifi should be off") }
  if rows["brightness"]?.value != 0.8 { failures.append("brightness should be 0.8") }
  if rows["show-advanced"]?.isOn != false { failures.append("show-advanced should be off") }
  if shownSections.contains("advanced") { failures.append("the advanced section should be hidden") }
  if !root.host.errors.isEmpty { failures.append("batches UIKit would reject: \(root.host.errors)") }
  if !root.host.reference.shows(root.view.sections) { failures.append("the view and its data differ") }
  if let profile = settings.opened.first {
    let form = Dictionary(
      uniqueKeysWithValues: await profile.source.snapshot.sections.flatMap(\.items).map {
        ($0.id, $0.content)
      })
    if form["name"]?.text != "Ada Lovelace" { failures.append("the name should be Ada Lovelace") }
    if form["status"]?.title != "Saved: Ada Lovelace" { failures.append("the form should say it saved") }
    if profile.cell("status")?.line != "Saved: Ada Lovelace" { failures.append("the status cell is stale") }
  } else {
    failures.append("the profile screen never opened")
  }
  guard failures.isEmpty else {
    print("FAILED: " + failures.joined(separator: "; "))
    exit(1)
  }
  print(
    "checked: the source holds every change made in the cells, the view shows it (\(root.view.batchCount) batches, every one valid under UIKit's rules), and the advanced section is hidden again"
  )
}
