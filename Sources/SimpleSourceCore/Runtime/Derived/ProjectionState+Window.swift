// A projection's window: the rows it publishes of each shown section, and how a step of what is shown
// becomes a step of the window, costing nothing but a look at the change when the change is elsewhere.

extension ProjectionState {
  /// The state after a step from `previous` (``shown`` changed by `change`, or the projection replaced),
  /// with ``published`` brought up to date, and the change of what is published; `nil` when nothing
  /// published changed.
  ///
  /// With no window, ``published`` is ``shown`` and the change is `change`. With one, a change that lands
  /// after the window in every section (an edit, insert, delete or move at positions past its end) leaves
  /// the window as it was; so does, for a sorted window over the whole list, a change whose every item
  /// sorts after the window's last row, before and after it. Otherwise the window is read again and
  /// compared with the previous one. `sameOrder` says that `previous` sorted as this state does (not so
  /// when the projection was replaced).
  ///
  /// A window is kept only when `previous` published the same window counted the same way (the same
  /// ``Projection/rows`` and ``Projection/rowsAcrossSections``): a replacement that changes only how rows
  /// are counted changes nothing shown, yet every row published may change.
  /// - Complexity: O(*k*) for the *k* changes of `change` when it is elsewhere (O(*s* + *k* log *n*) for
  ///   a sorted window over the whole list of *s* sections); otherwise O(*s* · *w* log *n*) to read a
  ///   window of *w* rows in each of *s* shown sections (O(*e* · *s* log *n*) over the whole list, for a
  ///   window ending at row *e*), and a diff of the two windows, O(*s* · *w*).
  @inlinable
  func windowing(_ change: Changeset<Section>, after previous: Self, sameOrder: Bool = true)
    -> (Self, Changeset<Section>?)
  {
    var state = self
    guard let rows = projection.rows else {
      state.published = shown
      guard previous.projection.rows != nil else { return (state, change.isEmpty ? nil : change) }
      return Self.publishing(state, after: previous, refreshing: change.forcedRefreshes)
    }
    let sameWindow =
      rows == previous.projection.rows
      && projection.rowsAcrossSections == previous.projection.rowsAcrossSections
    if sameWindow && !projection.rowsAcrossSections && !Self.reaches(change, rows) {
      state.published = previous.published
      return (state, nil)
    }
    if sameOrder, sameWindow, projection.rowsAcrossSections, let order = projection.areInIncreasingOrder,
      !Self.reaches(
        change, acrossSections: rows, from: previous.shown, to: shown, window: previous.published, by: order)
    {
      state.published = previous.published
      return (state, nil)
    }
    state.published = Self.window(rows, of: shown, projection)
    return Self.publishing(state, after: previous, refreshing: change.forcedRefreshes)
  }

  /// The state with its window moved to `rows` (`nil`: every row), and the change of what is published.
  /// - Complexity: O(*s* · *w* log *n*) and a diff of the two windows; O(*n*) when either is `nil`.
  @inlinable
  func movingWindow(to rows: Range<Int>?) -> (Self, Changeset<Section>?) {
    var state = self
    state.projection.rows = rows
    state.published = state.projection.rows.map { Self.window($0, of: shown, state.projection) } ?? shown
    return Self.publishing(state, after: self, refreshing: [])
  }

  /// `state` and the change from what `previous` published to what it publishes; `nil`, and the previous
  /// snapshot kept, when they are equal.
  @inlinable
  static func publishing(_ state: Self, after previous: Self, refreshing: Set<Item.ID>)
    -> (Self, Changeset<Section>?)
  {
    var state = state
    let published = state.published
    let change = Changeset(
      from: previous.published, to: published, refreshing: refreshing.filter { published.contains(item: $0) })
    guard !change.isEmpty else {
      state.published = previous.published
      return (state, nil)
    }
    return (state, change)
  }

  /// Whether `change` of what is shown may change window `rows`: it changes sections, or an item change
  /// lands before the window's end (a delete, insert or move there shifts the window; an edit inside it
  /// changes a row).
  /// - Complexity: O(*k*) for *k* changes.
  @inlinable
  static func reaches(_ change: Changeset<Section>, _ rows: Range<Int>) -> Bool {
    let sections = change.sectionChanges
    guard sections.deletes.isEmpty && sections.inserts.isEmpty && sections.moves.isEmpty,
      sections.updates.isEmpty
    else { return true }
    let items = change.itemChanges
    let end = rows.upperBound
    func before(_ position: ItemPosition) -> Bool { position.item < end }
    for delete in items.deletes where before(delete.from) { return true }
    for insert in items.inserts where before(insert.to) { return true }
    for move in items.moves where before(move.from) || before(move.to) { return true }
    for update in items.updates where rows.contains(update.to.item) { return true }
    return false
  }

  /// Whether `change` of what is shown (from `before` to `after`) may change `window`, rows `rows` of the
  /// whole list in the order `order`: it changes sections, the window is not full, or an item it
  /// deletes, inserts, moves or edits does not sort strictly after the window's last row, before or
  /// after the change. (An item equivalent to the last row may sort before it, by its section: it
  /// reaches.) A comparison that throws counts as "not after".
  /// - Complexity: O(*s*) to find the window's last row among its *s* sections' last rows, and
  ///   O(*k* log *n*) to read and compare the items of *k* changes.
  @inlinable
  static func reaches(
    _ change: Changeset<Section>, acrossSections rows: Range<Int>, from before: Snapshot<Section>,
    to after: Snapshot<Section>, window: Snapshot<Section>, by order: (Item, Item) throws -> Bool
  ) -> Bool {
    let sections = change.sectionChanges
    guard sections.deletes.isEmpty && sections.inserts.isEmpty && sections.moves.isEmpty,
      sections.updates.isEmpty, !rows.isEmpty, window.itemCount == rows.count
    else { return true }
    // Each section of the window holds its rows in order: the last row is the greatest of their last.
    var last: Item?
    for index in 0..<window.sectionCount {
      let count = window.itemCount(inSection: index)
      guard count > 0 else { continue }
      let item = window[ItemPosition(section: index, item: count - 1)]
      if let current = last, !((try? order(current, item)) ?? false) { continue }
      last = item
    }
    guard let last else { return true }
    func outside(_ item: Item) -> Bool { (try? order(last, item)) ?? false }
    let items = change.itemChanges
    for delete in items.deletes where !outside(before[delete.from]) { return true }
    for insert in items.inserts where !outside(after[insert.to]) { return true }
    for moved in [items.moves, items.updates] {
      for change in moved where !outside(before[change.from]) || !outside(after[change.to]) { return true }
    }
    return false
  }

  /// The window `rows` of `shown` as `projection` counts it: in each section, or over the whole list.
  @inlinable
  static func window(_ rows: Range<Int>, of shown: Snapshot<Section>, _ projection: Projection<Section>)
    -> Snapshot<Section>
  {
    guard projection.rowsAcrossSections else { return window(rows, of: shown) }
    return window(acrossSections: rows, of: shown, by: projection.areInIncreasingOrder)
  }

  /// Rows `rows` of the whole list `shown`, in the order `order` gives across sections (the sections'
  /// order when `nil`; equivalent items keep the order of their sections): every section, each with its
  /// items inside the window. A comparison that throws counts as "not before" (the sort that made `shown`
  /// compared these items already).
  /// - Complexity: O(*e* · *s* log *n*) for a window ending at row *e* of *s* sections; O(*e* + *s*) when
  ///   `order` is `nil`, plus O(*w* log *n*) to read the *w* rows.
  @inlinable
  static func window(
    acrossSections rows: Range<Int>, of shown: Snapshot<Section>,
    by order: (@Sendable (Item, Item) throws -> Bool)?
  ) -> Snapshot<Section> {
    let sectionCount = shown.sectionCount
    var picked = [[Item]](repeating: [], count: sectionCount)
    if let order {
      // A merge of the sorted sections: the next row is the first, by `order`, of each section's next item.
      var cursors = [Int](repeating: 0, count: sectionCount)
      var row = 0
      while row < rows.upperBound {
        var best: (section: Int, item: Item)?
        for section in 0..<sectionCount where cursors[section] < shown.itemCount(inSection: section) {
          let item = shown[ItemPosition(section: section, item: cursors[section])]
          if let current = best, !((try? order(item, current.item)) ?? false) { continue }
          best = (section, item)
        }
        guard let best else { break }
        if row >= rows.lowerBound { picked[best.section].append(best.item) }
        cursors[best.section] += 1
        row += 1
      }
    } else {
      var start = 0
      for section in 0..<sectionCount {
        let count = shown.itemCount(inSection: section)
        let lower = max(rows.lowerBound - start, 0)
        let upper = min(rows.upperBound - start, count)
        if lower < upper {
          picked[section] = (lower..<upper).map { shown[ItemPosition(section: section, item: $0)] }
        }
        start += count
        if start >= rows.upperBound { break }
      }
    }
    var sections: [Section] = []
    sections.reserveCapacity(sectionCount)
    for index in 0..<sectionCount {
      var section = shown.sectionContent(at: index)
      section.items = picked[index]
      sections.append(section)
    }
    return Snapshot(trusted: sections)
  }

  /// Rows `rows` of each section of `shown`: the sections, each with the items at those positions that
  /// exist.
  /// - Complexity: O(*s* · *w* log *n*) for an edited snapshot, O(*s* · *w*) for one made from arrays.
  @inlinable
  static func window(_ rows: Range<Int>, of shown: Snapshot<Section>) -> Snapshot<Section> {
    var sections: [Section] = []
    sections.reserveCapacity(shown.sectionCount)
    for index in 0..<shown.sectionCount {
      var section = shown.sectionContent(at: index)
      let count = shown.itemCount(inSection: index)
      let range = min(rows.lowerBound, count)..<min(rows.upperBound, count)
      section.items = range.map { shown[ItemPosition(section: index, item: $0)] }
      sections.append(section)
    }
    return Snapshot(trusted: sections)
  }
}
