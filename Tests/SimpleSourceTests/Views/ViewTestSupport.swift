// Views under test: a ReferenceListViewHost with a factory of typed cells, and the checks every test makes.

import SimpleSource
import SimpleSourceTesting
import Testing

typealias Host = ReferenceListViewHost<TestSection>
typealias HostDataSource = ListViewDataSource<TestSection, Host>

/// A cell that remembers what its configuration closure gave it.
final class ItemCell: ReferenceReusableView {
  var item: TestItem?
  var indexPath: ItemPosition?
}

/// A header view that remembers its section.
final class HeaderView: ReferenceReusableView {
  var title: String?
}

/// A host with one cell type, text headers and footers from the sections, driven by a new data source.
@MainActor
func makeView(_ update: ViewUpdate<TestSection> = .animated()) -> (Host, HostDataSource) {
  let host = Host()
  let factory = ViewFactory<TestSection, Host> { _, _ in "Item" }
  factory.registerCell(method: .class, reuseIdentifier: "Item", in: host) {
    (cell: ItemCell, item, indexPath) in
    cell.item = item
    cell.indexPath = ItemPosition(indexPath)
  }
  factory.registerHeaderText { section, _ in section.header }
  factory.registerFooterText { section, _ in section.footer }
  let dataSource = ListViewDataSource(view: host, factory: factory, update: update)
  host.dataSource = dataSource
  return (host, dataSource)
}

/// Checks that the view and its data source show exactly `expected`: no rule broken, every cell object
/// configured with the item at its position, every header and footer title current.
@MainActor
func expectShowing(
  _ expected: Snapshot<TestSection>, _ host: Host, _ dataSource: HostDataSource,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  #expect(host.errors == [], sourceLocation: sourceLocation)
  #expect(host.reference.warnings == [], sourceLocation: sourceLocation)
  #expect(host.reference.shows(expected.sections), sourceLocation: sourceLocation)
  #expect(dataSource.numberOfSections == expected.sections.count, sourceLocation: sourceLocation)
  for (sectionIndex, section) in expected.sections.enumerated()
  where sectionIndex < dataSource.numberOfSections {
    #expect(
      dataSource.numberOfItems(inSection: sectionIndex) == section.items.count, sourceLocation: sourceLocation
    )
    #expect(host.header(inSection: sectionIndex).title == section.header, sourceLocation: sourceLocation)
    #expect(host.footer(inSection: sectionIndex).title == section.footer, sourceLocation: sourceLocation)
    for (itemIndex, expectedItem) in section.items.enumerated() {
      let position = ItemPosition(section: sectionIndex, item: itemIndex)
      guard itemIndex < dataSource.numberOfItems(inSection: sectionIndex) else { break }
      #expect(dataSource.item(at: position) == expectedItem, sourceLocation: sourceLocation)
      let cell = host.cell(at: position) as? ItemCell
      #expect(cell?.item == expectedItem, "cell at \(position)", sourceLocation: sourceLocation)
    }
  }
}

/// A main-actor counter for closures in tests.
@MainActor
final class Counter: Sendable {
  private(set) var value = 0
  func increment() { value += 1 }
}
