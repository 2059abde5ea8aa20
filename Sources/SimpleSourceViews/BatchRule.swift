// The ids of UIKit's batch-update rules, and the errors and warnings citing them.

public import SimpleSourceCore

/// One of the rules UIKit applies to a batch update, such as `R19`: each constant below says what it requires.
public struct BatchRule: Hashable, Sendable, CustomStringConvertible {
  /// The rule id as the rules document writes it, such as `"R19"`.
  public let id: String

  /// Creates a rule from its id.
  package init(_ id: String) { self.id = id }

  /// The rule id.
  public var description: String { id }

  /// Reconfigure resolves against the data source at the before-state path.
  package static let r5 = BatchRule("R5")
  /// Section count: after = before + inserted − deleted.
  package static let r8 = BatchRule("R8")
  /// Item count of every surviving section.
  package static let r9 = BatchRule("R9")
  /// A deleted or reloaded section must exist before the update.
  package static let r11 = BatchRule("R11")
  /// An inserted section must exist after the update.
  package static let r12 = BatchRule("R12")
  /// A deleted or reloaded item must exist before the update.
  package static let r13 = BatchRule("R13")
  /// An inserted item must exist after the update.
  package static let r14 = BatchRule("R14")
  /// A moved section must exist before (source) and after (destination) the update.
  package static let r15 = BatchRule("R15")
  /// A moved item must exist before (source) and after (destination) the update.
  package static let r16 = BatchRule("R16")
  /// A reconfigured item must exist before the update.
  package static let r17 = BatchRule("R17")
  /// The same index path cannot be both deleted and reloaded.
  package static let r18 = BatchRule("R18")
  /// The same source cannot be both deleted (or reloaded) and moved.
  package static let r19 = BatchRule("R19")
  /// The same destination cannot be both inserted and moved to.
  package static let r20 = BatchRule("R20")
  /// No item can be moved out of a deleted or reloaded section.
  package static let r21 = BatchRule("R21")
  /// No item can be moved into an inserted or reloaded section.
  package static let r22 = BatchRule("R22")
  /// One source cannot be moved to two destinations.
  package static let r23 = BatchRule("R23")
  /// Two sources cannot be moved to one destination.
  package static let r24 = BatchRule("R24")
  /// An index path appears at most once in deletes, inserts and reloads.
  package static let r25 = BatchRule("R25")
  /// No reload of an item inside a deleted section.
  package static let r26 = BatchRule("R26")
  /// Item operations inside deleted, inserted or reloaded sections are dropped (warning).
  package static let r27 = BatchRule("R27")
  /// No item operation may touch a section that is moved in the same batch.
  package static let r28 = BatchRule("R28")
  /// Reloads combined with moves are mis-mapped.
  package static let r29 = BatchRule("R29")
  /// `reloadSections` mixed with other operations is fragile (warning).
  package static let r30 = BatchRule("R30")
  /// After every batch, UIKit's mapping must equal the data source.
  package static let r31 = BatchRule("R31")
  /// An item whose content changed must get a fresh or reconfigured cell.
  package static let r32 = BatchRule("R32")
  /// Needless refreshes (warning).
  package static let r33 = BatchRule("R33")
}

/// A batch that UIKit would reject with an exception, or that would make it show wrong or stale cells.
public struct ListViewError: Error, Hashable, CustomStringConvertible {
  /// The rule the batch breaks.
  public var rule: BatchRule
  /// A further rule that explains the cause, such as R29 for an R31 mismatch.
  public var hint: BatchRule?
  /// What went wrong, in UIKit's words where its exception text is known.
  public var message: String
  /// The offending section indices.
  public var sections: [Int]
  /// The offending item positions.
  public var positions: [ItemPosition]

  /// Creates an error.
  package init(
    _ rule: BatchRule, _ message: String, sections: [Int] = [], positions: [ItemPosition] = [],
    hint: BatchRule? = nil
  ) {
    self.rule = rule
    self.hint = hint
    self.message = message
    self.sections = sections
    self.positions = positions
  }

  /// `R19: attempt to …`.
  public var description: String {
    "\(rule)\(hint.map { " (\($0))" } ?? ""): \(message)"
  }
}

/// A batch that is legal but redundant, needless or fragile.
public struct ListViewWarning: Hashable, Sendable, CustomStringConvertible {
  /// The rule the warning cites.
  public var rule: BatchRule
  /// What is redundant or needless.
  public var message: String

  /// Creates a warning.
  package init(_ rule: BatchRule, _ message: String) {
    self.rule = rule
    self.message = message
  }

  /// `R33: reload of an unchanged item …`.
  public var description: String { "\(rule): \(message)" }
}
