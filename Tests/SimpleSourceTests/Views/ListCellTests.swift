// Cells that update themselves: configure once, reset on reuse, update, and actions that reach the handler
// with the item's id and current position, round trip through the source included.

import Foundation
import SimpleSource
import SimpleSourceTesting
import Testing

/// A reference cell with a switch: what the factory called, and what it shows.
private final class SwitchReferenceCell: ReferenceReusableView, ListCell {
  var cellContext: CellContext?
  var configured = 0
  var resets = 0
  var isOn = false
  var title = ""

  func configure() { configured += 1 }
  func reset() {
    resets += 1
    isOn = false
  }
  func update(with model: CellContent) {
    title = model.title ?? ""
    isOn = model.isOn ?? false
  }
  /// The user flips the switch.
  func flip() { send(.toggled(!isOn)) }
}

private typealias ScreenHost = ReferenceListViewHost<ScreenSection>

@MainActor
private func makeScreenView() -> (ScreenHost, ListViewDataSource<ScreenSection, ScreenHost>) {
  let host = ScreenHost()
  let factory = ViewFactory<ScreenSection, ScreenHost> { item, _ in item.cell.rawValue }
  factory.registerCell(SwitchReferenceCell.self, method: .class, reuseIdentifier: "toggle", in: host) {
    $0.content
  }
  let dataSource = ListViewDataSource(view: host, factory: factory)
  host.dataSource = dataSource
  return (host, dataSource)
}

private func toggle(_ id: String, _ isOn: Bool) -> ScreenItem {
  ScreenItem(id: id, cell: .toggle, content: CellContent(title: id, isOn: isOn))
}

@MainActor
@Suite("Cells that update themselves", .timeLimit(.minutes(30)))
struct ListCellTests {
  @Test("a toggle's action reaches the handler with the item and its current position, and round-trips")
  func toggleRoundTrip() async throws {
    let (host, dataSource) = makeScreenView()
    let source = try BasicDataSource(sections: [
      ScreenSection(id: "A", items: [toggle("wifi", false), toggle("bluetooth", true)])
    ])
    var received: [String] = []
    var write: Task<Void, any Error>?
    dataSource.interactions.forItems(withReuseIdentifier: "toggle") { toggles in
      toggles.cellAction = { action, item, position in
        received.append("\(item.id) \(action) \(position)")
        guard case .toggled(let isOn) = action else { return }
        var changed = item
        changed.content.isOn = isOn
        write = Task { try await source.replaceItem(changed) }
      }
    }
    await dataSource.follow(source)
    let wifi = try #require(host.cell(at: ItemPosition(section: 0, item: 0)) as? SwitchReferenceCell)
    #expect(wifi.configured == 1 && wifi.title == "wifi" && !wifi.isOn)
    // A batch moves wifi down before the user flips it: the handler gets its position now.
    try await source.moveItem(at: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: 1))
    await source.settled()
    await dataSource.showing(await source.snapshot)
    wifi.flip()
    #expect(received == ["wifi toggled(true) [0, 1]"])
    try await #require(write).value
    await source.settled()
    #expect(await source.snapshot.sections[0].items[1].content.isOn == true)
    await dataSource.showing(await source.snapshot)
    #expect(host.cell(at: ItemPosition(section: 0, item: 1)) === wifi, "reconfigured in place")
    #expect(wifi.isOn && wifi.configured == 1 && wifi.resets == 0)
    #expect(host.errors.isEmpty)
  }

  @Test("a cell reused for another item is reset first; a cell whose item is gone sends nothing")
  func resetAndGone() async throws {
    let (host, dataSource) = makeScreenView()
    let source = try BasicDataSource(sections: [ScreenSection(id: "A", items: [toggle("a", true)])])
    var received = 0
    dataSource.interactions.all.cellAction = { _, _, _ in received += 1 }
    await dataSource.follow(source)
    let cell = try #require(host.cell(at: ItemPosition(section: 0, item: 0)) as? SwitchReferenceCell)
    // a leaves (its cell goes to the reuse pool), then b arrives and gets that cell.
    for items in [[], [toggle("b", true)]] {
      try await source.setSections([ScreenSection(id: "A", items: items)])
      await source.settled()
      await dataSource.showing(await source.snapshot)
    }
    let reused = try #require(host.cell(at: ItemPosition(section: 0, item: 0)) as? SwitchReferenceCell)
    #expect(reused === cell, "the pool hands the same cell back")
    #expect(reused.resets == 1 && reused.configured == 1 && reused.title == "b")
    reused.flip()
    #expect(received == 1)
    try await source.setSections([ScreenSection(id: "A")])
    await source.settled()
    await dataSource.showing(await source.snapshot)
    reused.flip()
    #expect(received == 1, "b is gone: the recycled cell's action runs nothing")
  }
}

@Suite("Screens from JSON", .timeLimit(.minutes(30)))
struct ScreenTests {
  let settings = """
    { "title": "Settings", "sections": [
      { "id": "network", "header": "Network", "items": [
        { "id": "wifi", "cell": "toggle", "content": { "title": "Wi-Fi", "isOn": true } },
        { "id": "vpn", "cell": "rightDetail", "content": { "title": "VPN", "detail": "Off" },
          "child": { "title": "VPN", "sections": [
            { "id": "vpn-main", "items": [ { "id": "vpn-on", "cell": "toggle" } ] } ] } } ] },
      { "id": "about", "items": [ { "id": "version", "cell": "basic" } ] } ] }
    """

  @Test("a settings screen decodes, with content optional and a child screen")
  func decodes() async throws {
    let screen = try Screen(json: Data(settings.utf8))
    #expect(screen.title == "Settings")
    #expect(screen.sections.map(\.id) == ["network", "about"])
    #expect(screen.sections[0].items[0].content.isOn == true)
    #expect(screen.sections[1].items[0].content == CellContent())
    let child = try #require(screen.sections[0].items[1].child)
    let childSource = try child.dataSource()
    #expect(await childSource.snapshot.sections[0].items.map(\.id) == ["vpn-on"])
    let encoded = try JSONEncoder().encode(screen)
    #expect(try Screen(json: encoded) == screen, "round trip")
  }

  @Test(
    "malformed screens are typed errors naming their JSON path",
    arguments: [
      (
        #"{ "sections": [ { "id": "a", "items": [ { "cell": "basic" } ] } ] }"#, "$.sections[0].items[0].id",
        ScreenError.Reason.missingField("id")
      ),
      (
        #"{ "sections": [ { "id": "a", "items": [ { "id": "x", "cell": "toggel" } ] } ] }"#,
        "$.sections[0].items[0].cell", .unknownCellKind("toggel")
      ),
      (
        #"{ "sections": [ { "id": "a", "items": [ { "id": "x", "cell": "basic" } ] }, { "id": "b", "items": [ { "id": "x", "cell": "basic" } ] } ] }"#,
        "$.sections[1].items[0].id", .duplicateID("x")
      ),
      (
        #"{ "sections": [ { "id": "a", "items": [] }, { "id": "a", "items": [] } ] }"#, "$.sections[1].id",
        .duplicateID("a")
      ),
      (
        #"{ "sections": [ { "id": "a", "items": [ { "id": "x", "cell": "basic", "child": { "sections": [ { "id": "c", "items": [ { "id": "y", "cell": "basic" }, { "id": "y", "cell": "basic" } ] } ] } } ] } ] }"#,
        "$.sections[0].items[0].child.sections[0].items[1].id", .duplicateID("y")
      ),
      (#"{ "sections": "#, "$", .malformed("")),
      (#"{ "title": "no sections" }"#, "$.sections", .missingField("sections")),
    ])
  func malformed(json: String, path: String, reason: ScreenError.Reason) {
    do {
      _ = try Screen(json: Data(json.utf8))
      Issue.record("decoded \(json)")
    } catch {
      #expect(error.path == path, "\(error)")
      if case .malformed = reason {
        guard case .malformed = error.reason else { Issue.record("\(error)"); return }
      } else {
        #expect(error.reason == reason, "\(error)")
      }
    }
  }
}
