// How often ObservedRows' row bodies would run: a model of SwiftUI's drawing (Observation invalidates a
// body; a parent's body builds its children anew, and a child whose value compares equal is not asked for
// its body again) over the very comparison the SwiftUI skin uses, ObservedRowIdentity.

import Observation
import SimpleSource
import SimpleSourceTesting
import SimpleSourceViews
import Synchronization
import Testing

/// SwiftUI's work for one `ObservedRows`, modelled: a `ForEach` over the section's rows whose body observes
/// `rows`, one row view per row whose body observes its item, and the rule that decides whether a child
/// view built again draws again. Counts the row bodies it runs.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
final class RowsDrawing {
  /// How the model compares a row view built again with the one it replaces.
  enum Comparison {
    /// By ``ObservedRowIdentity``, as the skin's `equatable()` row views are.
    case identity
    /// Never equal: a view storing closures, which SwiftUI cannot compare.
    case storedClosures
  }

  let list: ObservedList<TestSection>
  let section: Int
  let comparison: Comparison
  /// The closures' identity of the `ObservedRows` value SwiftUI holds; a parent drawing again makes one.
  private(set) var closures = RowClosuresIdentity()
  private(set) var rowBodies = 0
  private var shown: [String: ObservedRowIdentity<TestSection>] = [:]
  /// What Observation invalidated since the last frame: the ForEach's body and rows by id. Observation
  /// tells from the thread of the change, so it is kept under a lock.
  private final class Invalidated: Sendable {
    let state = Mutex<(forEach: Bool, rows: Set<String>)>((false, []))
  }
  private let invalidated = Invalidated()

  init(_ list: ObservedList<TestSection>, section: Int, comparison: Comparison) {
    self.list = list
    self.section = section
    self.comparison = comparison
    drawForEach()
  }

  /// The parent view drew again: a new `ObservedRows` value, so new closures, and its body runs.
  func parentDrew() {
    closures = RowClosuresIdentity()
    drawForEach()
  }

  /// One frame: the bodies Observation invalidated run again, the ForEach's first.
  func frame() {
    let (forEach, rows) = invalidated.state.withLock { state in
      defer { state = (false, []) }
      return state
    }
    if forEach { drawForEach() }
    for id in rows { if let identity = shown[id] { drawRow(identity) } }
  }

  private func drawForEach() {
    let rows = withObservationTracking {
      list.sections[section].rows
    } onChange: { [invalidated] in
      invalidated.state.withLock { $0.forEach = true }
    }
    var next: [String: ObservedRowIdentity<TestSection>] = [:]
    for row in rows {
      let identity = ObservedRowIdentity(list: list, row: row, interactions: nil, closures: closures)
      next[row.id] = identity
      let equal =
        switch comparison {
        case .identity: shown[row.id] == identity
        case .storedClosures: false
        }
      if !equal { drawRow(identity) }
    }
    shown = next
  }

  private func drawRow(_ identity: ObservedRowIdentity<TestSection>) {
    rowBodies += 1
    let id = identity.row.id
    _ = withObservationTracking {
      identity.row.item
    } onChange: { [invalidated] in
      invalidated.state.withLock { _ = $0.rows.insert(id) }
    }
  }

  /// Forgets the bodies counted so far.
  func resetCount() { rowBodies = 0 }
}

@MainActor
@Suite("ObservedRows' row bodies", .timeLimit(.minutes(30)))
struct ObservedRowsRenderTests {
  static let count = 1_000

  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  static func thousandRows() async throws -> (BasicDataSource<TestSection>, ObservedList<TestSection>) {
    let items = (0..<count).map { TestItem("r\($0)") }
    let source = try BasicDataSource(sections: [TestSection(id: "A", items: items)])
    return (source, await ObservedList(following: source, pacing: .immediate))
  }

  @Test("a rename of one row among 1,000 runs that row's body only")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func renameRunsOneBody() async throws {
    let (source, list) = try await Self.thousandRows()
    for comparison in [RowsDrawing.Comparison.identity, .storedClosures] {
      let drawing = RowsDrawing(list, section: 0, comparison: comparison)
      #expect(drawing.rowBodies == Self.count)
      drawing.resetCount()
      let renamed = (await source.snapshot).sections[0].items[500].id
      #expect(try await list.reached(try await source.updateItem(renamed) { $0.version += 1 }))
      drawing.frame()
      // Observation alone decides a rename, whatever the comparison: the section's rows are not assigned.
      #expect(drawing.rowBodies == 1, "\(comparison)")
    }
    list.stop()
  }

  @Test("an insert among 1,000 rows runs the new row's body only; stored closures would run every row's")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func insertRunsNewBodyOnly() async throws {
    let (source, list) = try await Self.thousandRows()
    let compared = RowsDrawing(list, section: 0, comparison: .identity)
    let uncompared = RowsDrawing(list, section: 0, comparison: .storedClosures)
    /// Makes one write, draws the frame its batch invalidated, and returns the row bodies each model ran.
    func bodies(_ write: () async throws -> Version) async throws -> (compared: Int, uncompared: Int) {
      compared.resetCount()
      uncompared.resetCount()
      #expect(try await list.reached(try await write()))
      compared.frame()
      uncompared.frame()
      return (compared.rowBodies, uncompared.rowBodies)
    }
    let insert = try await bodies { try await source.insertItems([TestItem("new")], before: "r10") }
    #expect(insert.compared == 1)
    #expect(insert.uncompared == Self.count + 1)
    // A delete and a move: no body at all, compared; every remaining row's, not.
    let delete = try await bodies { try await source.deleteItems(["r3"]) }
    #expect(delete.compared == 0)
    #expect(delete.uncompared == Self.count)
    let move = try await bodies { try await source.moveItem("r7", before: "r900") }
    #expect(move.compared == 0)
    #expect(move.uncompared == Self.count)
    list.stop()
  }

  @Test("when the parent draws again (its closures may differ), every row draws again")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func newClosuresRedrawEveryRow() async throws {
    let (_, list) = try await Self.thousandRows()
    let drawing = RowsDrawing(list, section: 0, comparison: .identity)
    drawing.resetCount()
    drawing.parentDrew()
    #expect(drawing.rowBodies == Self.count)
    list.stop()
  }

  @Test("row identities are equal only for the same list, row, interactions and closures")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func identityEquality() async throws {
    let (source, list) = try await Self.thousandRows()
    let other = await ObservedList(following: source, pacing: .immediate)
    let rows = list.sections[0].rows
    let closures = RowClosuresIdentity()
    let interactions = ListInteractions<TestSection>()
    func identity(
      _ list: ObservedList<TestSection>, _ row: ObservedRow<TestItem>,
      _ interactions: ListInteractions<TestSection>?, _ closures: RowClosuresIdentity
    ) -> ObservedRowIdentity<TestSection> {
      ObservedRowIdentity(list: list, row: row, interactions: interactions, closures: closures)
    }
    let base = identity(list, rows[0], interactions, closures)
    #expect(base == identity(list, rows[0], interactions, closures))
    #expect(base != identity(other, other.sections[0].rows[0], interactions, closures))
    #expect(base != identity(list, rows[1], interactions, closures))
    #expect(base != identity(list, rows[0], nil, closures))
    #expect(base != identity(list, rows[0], ListInteractions(), closures))
    #expect(base != identity(list, rows[0], interactions, RowClosuresIdentity()))
    list.stop()
    other.stop()
  }
}
