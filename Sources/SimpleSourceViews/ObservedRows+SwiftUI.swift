// The SwiftUI skin: a ForEach over one section of an ObservedList whose rows redraw alone, with onMove and
// onDelete sent to the source and the swipe actions of ListInteractions. Compiled on Apple platforms only;
// everything it calls is tested on Linux.

#if canImport(SwiftUI)
  public import SwiftUI
  public import SimpleSourceCore

  /// The rows of one section of an ``ObservedList`` for a SwiftUI `List`: each row is a view of its own,
  /// so an edit redraws that row only; `onMove` and `onDelete` go to the source through
  /// ``ObservedList/move(fromOffsets:toOffset:inSection:using:)`` and
  /// ``ObservedList/delete(atOffsets:inSection:using:)`` (shown at once, reconciled, rolled back when refused);
  /// the leading and trailing swipe actions of `interactions` become SwiftUI's `swipeActions` (not on tvOS,
  /// which has none), resolved by ``ObservedList/swipeActions(_:forRow:in:reuseIdentifier:)`` and run by
  /// ``ObservedList/perform(_:onRow:in:)``. A row with swipe actions of its own replaces SwiftUI's swipe to
  /// delete: give it a destructive action instead (drawn red, without SwiftUI's destructive role, which
  /// would remove the row before the handler answers).
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
    let deleting: (@Sendable ([Section.Item.ID]) async throws -> Version)?
    let refused: @MainActor (any Error) -> Void
    let interactions: ListInteractions<Section>?
    let reuseIdentifier: (Section.Item) -> String
    let row: (Section.Item) -> Row
    /// Made anew with every value, so rows compare unequal (and draw again) only when the closures may
    /// have changed.
    let closures = RowClosuresIdentity()

    /// The rows of `section` of `list`.
    /// - Parameters:
    ///   - reordering: Where moves go (a `BasicDataSource` is one); `nil` disables moving.
    ///   - deleting: Deletes ids from the source and returns a version that holds it; `nil` disables
    ///     deleting.
    ///   - refused: Told the error of a move or delete the source refused (it is rolled back already).
    ///   - interactions: Where the rows' swipe actions come from; `nil` for none.
    ///   - reuseIdentifier: The kind of an item, whose closures in `interactions` it uses (else `all`).
    ///   - row: The view of one item.
    public init(
      _ list: ObservedList<Section>, section: ObservedSection<Section>,
      reordering: (any ReorderingDelegate<Section>)? = nil,
      deleting: (@Sendable ([Section.Item.ID]) async throws -> Version)? = nil,
      refused: @escaping @MainActor (any Error) -> Void = { _ in },
      interactions: ListInteractions<Section>? = nil,
      reuseIdentifier: @escaping (Section.Item) -> String = { _ in "" },
      @ViewBuilder row: @escaping (Section.Item) -> Row
    ) {
      self.list = list
      self.section = section
      self.reordering = reordering
      self.deleting = deleting
      self.refused = refused
      self.interactions = interactions
      self.reuseIdentifier = reuseIdentifier
      self.row = row
    }

    /// The rows, with `onMove` and `onDelete` when a delegate and a deleting closure were given.
    ///
    /// Each row view is compared by ``ObservedRowIdentity`` (`equatable()`): when rows are inserted,
    /// deleted or moved, only the new rows' `body` runs; a row's `body` runs again when its item changes.
    public var body: some View {
      ForEach(section.rows) { observed in
        ObservedRowView(
          identity: ObservedRowIdentity(
            list: list, row: observed, interactions: interactions, closures: closures),
          reuseIdentifier: reuseIdentifier, content: row
        )
        .equatable()
      }
      .onMove(
        perform: reordering.map { delegate in { offsets, destination in move(offsets, destination, delegate) }
        }
      )
      .onDelete(perform: deleting.map { commit in { offsets in delete(offsets, commit) } })
    }

    private func index() -> Int? { list.sections.firstIndex { $0 === section } }

    // Both resolve SwiftUI's offsets inside its callback, against the rows it shows (a batch queued for
    // the model must not change which row they name), and show the edit before returning; only the
    // commit waits.
    private func move(_ offsets: IndexSet, _ destination: Int, _ delegate: any ReorderingDelegate<Section>) {
      guard let index = index() else { return }
      let commit = list.move(fromOffsets: offsets, toOffset: destination, inSection: index, using: delegate)
      report(commit)
    }

    private func delete(
      _ offsets: IndexSet, _ commit: @escaping @Sendable ([Section.Item.ID]) async throws -> Version
    ) {
      guard let index = index() else { return }
      report(list.delete(atOffsets: offsets, inSection: index, using: commit))
    }

    /// Hands a refused commit's error to `refused`.
    private func report(_ commit: Task<Void, any Error>) {
      Task.schedulable("reporting a commit") {
        do { try await commit.value } catch { refused(error) }
      }
    }
  }

  /// One row: its own view, so that reading ``ObservedRow/item`` here makes only this row redraw (its swipe
  /// actions are asked with that item, and observe nothing else). Compared by its identity alone: the
  /// closures it stores are those of the identity's ``RowClosuresIdentity``.
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  @MainActor
  struct ObservedRowView<Section: SectionType, Content: View>: View, Equatable {
    let identity: ObservedRowIdentity<Section>
    let reuseIdentifier: (Section.Item) -> String
    let content: (Section.Item) -> Content

    private var list: ObservedList<Section> { identity.list }
    private var row: ObservedRow<Section.Item> { identity.row }
    private var interactions: ListInteractions<Section>? { identity.interactions }

    nonisolated static func == (lhs: Self, rhs: Self) -> Bool { lhs.identity == rhs.identity }

    var body: some View {
      let item = row.item
      #if os(tvOS)
        content(item)
      #else
        content(item)
          .modifier(SwipeButtons(edge: .leading, actions: actions(.leading, item), perform: perform))
          .modifier(SwipeButtons(edge: .trailing, actions: actions(.trailing, item), perform: perform))
      #endif
    }

    private func actions(_ edge: SwipeEdge, _ item: Section.Item) -> SwipeActions<Section.Item>? {
      guard let interactions else { return nil }
      return list.swipeActions(edge, forRow: row.id, in: interactions, reuseIdentifier: reuseIdentifier(item))
    }

    private func perform(_ action: SwipeAction<Section.Item>) {
      guard let interactions else { return }
      list.perform(action, onRow: row.id, in: interactions)
    }
  }

  #if !os(tvOS)
    /// SwiftUI's `swipeActions` for one edge, when there are actions: without any, the row keeps SwiftUI's
    /// own swipe (to delete, with `onDelete`).
    @available(iOS 17, macOS 14, watchOS 10, *)
    @MainActor
    struct SwipeButtons<Item>: ViewModifier {
      let edge: HorizontalEdge
      let actions: SwipeActions<Item>?
      let perform: @MainActor (SwipeAction<Item>) -> Void

      @ViewBuilder
      func body(content: Content) -> some View {
        if let actions {
          content.swipeActions(edge: edge, allowsFullSwipe: actions.performsFirstActionWithFullSwipe) {
            ForEach(actions.actions.indices, id: \.self) { index in
              let action = actions.actions[index]
              // No `.destructive` role: SwiftUI removes the row as soon as such a button is tapped,
              // whatever the handler, which may refuse, answers. The row leaves when the source's batch
              // removes it; a destructive action is drawn red.
              Button {
                perform(action)
              } label: {
                if let image = action.systemImageName {
                  Label(action.title ?? "", systemImage: image)
                } else {
                  Text(action.title ?? "")
                }
              }
              .tint(action.style == .destructive ? .red : nil)
            }
          }
        } else {
          content
        }
      }
    }
  #endif
#endif
