// The SwiftUI skin: a ForEach over one section of an ObservedList whose rows redraw alone, with onMove and
// onDelete sent to the source. Compiled on Apple platforms only; everything it calls is tested on Linux.

#if canImport(SwiftUI)
  public import SwiftUI
  public import SimpleSourceCore

  /// The rows of one section of an ``ObservedList`` for a SwiftUI `List`: each row is a view of its own,
  /// so an edit redraws that row only; `onMove` and `onDelete` go to the source through
  /// ``ObservedList/move(fromOffsets:toOffset:inSection:using:)`` and
  /// ``ObservedList/delete(atOffsets:inSection:using:)`` (shown at once, reconciled, rolled back when refused).
  ///
  /// ```swift
  /// List {
  ///   ForEach(list.sections) { section in
  ///     Section(section.content.title) {
  ///       ObservedRows(list, section: section, reordering: tasks, deleting: { try await tasks.deleteItems($0) }) {
  ///         Text($0.title)
  ///       }
  ///     }
  ///   }
  /// }
  /// ```
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  @MainActor
  public struct ObservedRows<Section: SectionType, Row: View>: View {
    let list: ObservedList<Section>
    let section: ObservedSection<Section>
    let reordering: (any ReorderingDelegate<Section>)?
    let deleting: (@Sendable ([Section.Item.ID]) async throws -> Int)?
    let refused: @MainActor (any Error) -> Void
    let row: (Section.Item) -> Row

    /// The rows of `section` of `list`.
    /// - Parameters:
    ///   - reordering: Where moves go (a `BasicDataSource` is one); `nil` disables moving.
    ///   - deleting: Deletes ids from the source and returns a version that holds it; `nil` disables
    ///     deleting.
    ///   - refused: Told the error of a move or delete the source refused (it is rolled back already).
    ///   - row: The view of one item.
    public init(
      _ list: ObservedList<Section>, section: ObservedSection<Section>,
      reordering: (any ReorderingDelegate<Section>)? = nil,
      deleting: (@Sendable ([Section.Item.ID]) async throws -> Int)? = nil,
      refused: @escaping @MainActor (any Error) -> Void = { _ in },
      @ViewBuilder row: @escaping (Section.Item) -> Row
    ) {
      self.list = list
      self.section = section
      self.reordering = reordering
      self.deleting = deleting
      self.refused = refused
      self.row = row
    }

    /// The rows, with `onMove` and `onDelete` when a delegate and a deleting closure were given.
    public var body: some View {
      ForEach(section.rows) { observed in
        ObservedRowView(row: observed, content: row)
      }
      .onMove(
        perform: reordering.map { delegate in { offsets, destination in move(offsets, destination, delegate) }
        }
      )
      .onDelete(perform: deleting.map { commit in { offsets in delete(offsets, commit) } })
    }

    private func index() -> Int? { list.sections.firstIndex { $0 === section } }

    private func move(_ offsets: IndexSet, _ destination: Int, _ delegate: any ReorderingDelegate<Section>) {
      guard let index = index() else { return }
      Task {
        do {
          try await list.move(fromOffsets: offsets, toOffset: destination, inSection: index, using: delegate)
        } catch {
          refused(error)
        }
      }
    }

    private func delete(
      _ offsets: IndexSet, _ commit: @escaping @Sendable ([Section.Item.ID]) async throws -> Int
    ) {
      guard let index = index() else { return }
      Task {
        do {
          try await list.delete(atOffsets: offsets, inSection: index, using: commit)
        } catch {
          refused(error)
        }
      }
    }
  }

  /// One row: its own view, so that reading ``ObservedRow/item`` here makes only this row redraw.
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  @MainActor
  struct ObservedRowView<Item: Identifiable & Equatable & Sendable, Content: View>: View
  where Item.ID: Sendable {
    let row: ObservedRow<Item>
    let content: (Item) -> Content

    var body: some View { content(row.item) }
  }
#endif
