// ViewFactory: typed cells, headers and footers, several cell and item types, and cells that change class.

import Foundation
import SimpleSource
import SimpleSourceTesting
import Testing

/// The seed's settings screen: several item types in one enum, one cell class per case.
enum Preference: Identifiable, Equatable, Sendable {
  case toggle(id: String, title: String, isOn: Bool)
  case choice(id: String, title: String, value: String)
  case info(id: String, text: String)

  var id: String {
    switch self {
    case .toggle(let id, _, _), .choice(let id, _, _), .info(let id, _): id
    }
  }
}

typealias Settings = Section<String, Preference>
typealias SettingsHost = ReferenceListViewHost<Settings>

final class SwitchCell: ReferenceReusableView {
  var title = ""
  var isOn = false
}

final class ChoiceCell: ReferenceReusableView {
  var title = ""
  var value = ""
}

final class InfoCell: ReferenceReusableView {
  var text = ""
}

/// Two cell classes picked by the item's version, so that content changes can change a cell's class.
final class EvenCell: ReferenceReusableView { var item: TestItem? }
final class OddCell: ReferenceReusableView { var item: TestItem? }

@Suite("ViewFactory", .timeLimit(.minutes(30)))
@MainActor
struct ViewFactoryTests {
  /// The settings screen: the factory picks the identifier from the case, each closure takes its own class.
  func settingsScreen(_ host: SettingsHost) -> ViewFactory<Settings, SettingsHost> {
    let factory = ViewFactory<Settings, SettingsHost> { preference, _ in
      switch preference {
      case .toggle: "Switch"
      case .choice: "Choice"
      case .info: "Info"
      }
    }
    factory.registerCell(method: .class, reuseIdentifier: "Switch", in: host) {
      (cell: SwitchCell, preference, _) in
      guard case .toggle(_, let title, let isOn) = preference else { return }
      cell.title = title
      cell.isOn = isOn
    }
    factory.registerCell(method: .class, reuseIdentifier: "Choice", in: host) {
      (cell: ChoiceCell, preference, _) in
      guard case .choice(_, let title, let value) = preference else { return }
      cell.title = title
      cell.value = value
    }
    factory.registerCell(method: .class, reuseIdentifier: "Info", in: host) {
      (cell: InfoCell, preference, _) in
      guard case .info(_, let text) = preference else { return }
      cell.text = text
    }
    factory.registerHeaderText { section, _ in section.header?.uppercased() }
    return factory
  }

  /// What a cell shows, read back from whichever class it is.
  func shown(_ cell: ReferenceReusableView?) -> Preference? {
    switch cell {
    case let cell as SwitchCell: .toggle(id: "", title: cell.title, isOn: cell.isOn)
    case let cell as ChoiceCell: .choice(id: "", title: cell.title, value: cell.value)
    case let cell as InfoCell: .info(id: "", text: cell.text)
    default: nil
    }
  }

  func withoutID(_ preference: Preference) -> Preference {
    switch preference {
    case .toggle(_, let title, let isOn): .toggle(id: "", title: title, isOn: isOn)
    case .choice(_, let title, let value): .choice(id: "", title: title, value: value)
    case .info(_, let text): .info(id: "", text: text)
    }
  }

  @Test("several item types in an enum: each case gets its own cell class, configured by its typed closure")
  func settingsScreenCells() async throws {
    let source = try BasicDataSource(sections: [
      Settings(
        id: "general", header: "General",
        items: [
          .toggle(id: "wifi", title: "Wi-Fi", isOn: true),
          .choice(id: "lang", title: "Language", value: "English"),
          .info(id: "version", text: "1.0"),
        ]),
      Settings(
        id: "privacy", header: "Privacy", items: [.toggle(id: "track", title: "Tracking", isOn: false)]),
    ])
    let host = SettingsHost()
    let dataSource = ListViewDataSource(view: host, factory: settingsScreen(host), update: .animated())
    host.dataSource = dataSource
    await dataSource.follow(source)

    // Same class: reconfigured in place. Another case: the cell changes class, so it must be reloaded.
    try await source.replaceItem(.toggle(id: "wifi", title: "Wi-Fi", isOn: false))
    try await source.replaceItem(.info(id: "lang", text: "Language is managed by your organisation"))
    try await source.moveItem("track", before: "version")
    try await source.insertSections([Settings(id: "about", header: "About", items: [])], before: "general")
    try await source.appendItems([.choice(id: "theme", title: "Theme", value: "Dark")], toSection: "about")
    await source.settled()
    let final = await source.snapshot
    await dataSource.showing(final)

    #expect(host.errors == [])
    #expect(host.reference.warnings == [])
    #expect(host.reference.shows(final.sections))
    for (sectionIndex, section) in final.sections.enumerated() {
      #expect(host.header(inSection: sectionIndex).title == section.header?.uppercased())
      for (itemIndex, preference) in section.items.enumerated() {
        let cell = host.cell(at: ItemPosition(section: sectionIndex, item: itemIndex))
        #expect(shown(cell) == withoutID(preference), "\(preference.id)")
      }
    }
    #expect(host.batches.reduce(0) { $0 + $1.reconfigureItems.count } == 1, "wi-fi kept its cell")
    #expect(host.batches.reduce(0) { $0 + $1.reloadItems.count } == 1, "language changed class")
  }

  @Test("the host catches a reconfigure that would change a cell's class, as UIKit raises")
  func reconfigureAcrossClassesIsAnError() async throws {
    // A factory whose identifier depends on something besides the item, so the data source cannot see the
    // class change: it reconfigures, and the host must report what UIKit would raise.
    final class Mode { var identifier = "Switch" }
    let mode = Mode()
    let host = SettingsHost()
    let factory = ViewFactory<Settings, SettingsHost> { _, _ in mode.identifier }
    factory.registerCell(method: .class, reuseIdentifier: "Switch", in: host) { (_: SwitchCell, _, _) in }
    factory.registerCell(method: .class, reuseIdentifier: "Info", in: host) { (_: InfoCell, _, _) in }
    let dataSource = ListViewDataSource(view: host, factory: factory, update: .animated())
    host.dataSource = dataSource
    let source = try BasicDataSource(sections: [
      Settings(id: "general", items: [.toggle(id: "wifi", title: "Wi-Fi", isOn: true)])
    ])
    await dataSource.follow(source)
    mode.identifier = "Info"
    try await source.replaceItem(.toggle(id: "wifi", title: "Wi-Fi", isOn: false))
    await source.settled()
    await dataSource.showing(await source.snapshot)
    #expect(host.batches.map(\.reconfigureItems) == [[ItemPosition(section: 0, item: 0)]])
    #expect(host.errors.map(\.rule) == [.r5])
  }

  @Test("custom header and footer views are typed, and follow section moves and renames")
  func customSupplementaryViews() async throws {
    let host = Host()
    let factory = ViewFactory<TestSection, Host> { _, _ in "Item" }
    factory.registerCell(method: .class, reuseIdentifier: "Item", in: host) { (cell: ItemCell, item, _) in
      cell.item = item
    }
    factory.registerHeaderView(method: .class, reuseIdentifier: "Header", in: host) {
      (header: HeaderView, section, indexPath) in
      header.title = section.header
      #expect(ItemPosition(indexPath).item == 0)
    }
    factory.registerFooterView(method: .class, reuseIdentifier: "Footer", in: host) {
      (footer: HeaderView, section, _) in footer.title = section.footer
    }
    #expect(
      factory.hasSupplementaryView(ofKind: .header)
        && !factory.hasSupplementaryView(ofKind: .init(rawValue: "badge")))
    for style in [RefreshStyle.reconfigure, .reload] {
      let dataSource = ListViewDataSource(view: host, factory: factory, update: .animated(refreshing: style))
      host.dataSource = dataSource
      let source = try TestSource(sections: layout("A: a | B: b | C: c"))
      await dataSource.follow(source)
      try await source.moveSection("C", before: "A")
      try await source.updateSection(TestSection(id: "B", header: "Bravo", footer: "end of B"))
      try await source.deleteSections(["A"])
      try await source.insertSections([TestSection(id: "D", header: "Delta")], after: "B")
      await source.settled()
      let final = await source.snapshot
      await dataSource.showing(final)
      #expect(host.errors == [] && host.reference.warnings == [], "\(style)")
      for (index, section) in final.sections.enumerated() {
        #expect(
          (host.header(inSection: index).view as? HeaderView)?.title == section.header, "\(style) \(index)")
        #expect(
          (host.footer(inSection: index).view as? HeaderView)?.title == section.footer, "\(style) \(index)")
      }
    }
  }

  @Test(
    "supplementary index paths of one or two indices resolve; malformed or unknown ones give nil, never a trap"
  )
  func supplementaryIndexPaths() async throws {
    let host = Host()
    let factory = ViewFactory<TestSection, Host> { _, _ in "Item" }
    factory.registerCell(method: .class, reuseIdentifier: "Item", in: host) { (cell: ItemCell, item, _) in
      cell.item = item
    }
    factory.registerHeaderView(method: .class, reuseIdentifier: "Header", in: host) {
      (header: HeaderView, section, _) in header.title = section.header
    }
    let dataSource = ListViewDataSource(view: host, factory: factory)
    host.dataSource = dataSource
    await dataSource.follow(try TestSource(sections: layout("A: a | B: b")))
    func title(_ indexPath: IndexPath, _ kind: SupplementaryKind = .header) -> String?? {
      dataSource.supplementaryView(ofKind: kind, at: indexPath, in: host).map { ($0 as? HeaderView)?.title }
    }
    #expect(title([1, 0]) == .some("B v0"))
    #expect(title([1]) == .some("B v0"), "a one-index path is its section")
    #expect(title([]) == nil)
    #expect(title([0, 0, 0]) == nil)
    #expect(title([2]) == nil && title([-1, 0]) == nil, "no such section")
    #expect(title([0, 0], .footer) == nil, "no footer registered")
    #expect(
      ItemPosition(exactly: [3]) == nil && ItemPosition(exactly: [3, 4]) == ItemPosition(section: 3, item: 4))
  }

  @Test("one factory serves several views once registered in each")
  func oneFactorySeveralViews() async throws {
    let (first, firstDataSource) = makeView()
    let second = Host()
    firstDataSource.factory.register(in: second)
    let secondDataSource = ListViewDataSource(view: second, factory: firstDataSource.factory)
    second.dataSource = secondDataSource
    let source = try TestSource(sections: layout("A: a b | B: c"))
    await firstDataSource.follow(source)
    await secondDataSource.follow(source)
    try await source.moveItem("c", before: "a")
    await source.settled()
    let final = await source.snapshot
    await firstDataSource.showing(final)
    await secondDataSource.showing(final)
    expectShowing(final, first, firstDataSource)
    expectShowing(final, second, secondDataSource)
  }

  @Test("after random batches every cell shows the item at its index path, in the class its content asks for")
  func randomBatchesConfigureEveryCell() async throws {
    let settings = RandomTestSettings.current(defaultCases: 100, casesVariable: "SIMPLESOURCE_VIEW_CASES")
    print("ViewFactory random batches: \(settings.replay)")
    var random = SeededGenerator(seed: settings.seed)
    let pairs = RandomSnapshotPairs(maxSections: 6, maxItems: 40)
    for index in 0..<settings.cases {
      let (old, new) = pairs.next(using: &random)
      let source = try TestSource(sections: old)
      var views: [(Host, HostDataSource)] = []
      for style in [RefreshStyle.reconfigure, .reload] {
        let host = Host()
        let factory = ViewFactory<TestSection, Host> { item, _ in
          item.version.isMultiple(of: 2) ? "Even" : "Odd"
        }
        factory.registerCell(method: .class, reuseIdentifier: "Even", in: host) { (cell: EvenCell, item, _) in
          cell.item = item
        }
        factory.registerCell(method: .class, reuseIdentifier: "Odd", in: host) { (cell: OddCell, item, _) in
          cell.item = item
        }
        factory.registerHeaderText { section, _ in section.header }
        let dataSource = ListViewDataSource(
          view: host, factory: factory, update: .animated(refreshing: style))
        host.dataSource = dataSource
        await dataSource.follow(source)
        views.append((host, dataSource))
      }
      try await source.setSections(new)
      await source.settled()
      let final = await source.snapshot
      for (host, dataSource) in views {
        await dataSource.showing(final)
        #expect(host.errors == [], "case \(index): \(settings.replay)")
        #expect(host.reference.shows(final.sections), "case \(index): \(settings.replay)")
        for (sectionIndex, section) in final.sections.enumerated() {
          #expect(host.header(inSection: sectionIndex).title == section.header, "case \(index)")
          for (itemIndex, item) in section.items.enumerated() {
            let cell = host.cell(at: ItemPosition(section: sectionIndex, item: itemIndex))
            let shown = item.version.isMultiple(of: 2) ? (cell as? EvenCell)?.item : (cell as? OddCell)?.item
            #expect(shown == item, "case \(index) at [\(sectionIndex), \(itemIndex)]: \(settings.replay)")
          }
        }
      }
    }
  }
}
