// Why a wire message was refused: what was wrong, and where.

public import SimpleSourceCore

/// A message or batch from the wire that a receiver refused. The receiver's state is unchanged.
///
/// Every refusal names what was wrong in ``code`` and, where it applies, the offending position, id or
/// version in ``detail``: `idMismatch: stage 0 item delete at [0, 3] names "b" but holds "c"`.
public struct WireError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What was wrong. New codes may be added.
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// A stable, readable name of the code, such as `"versionMismatch"`; the `code` of an `error` message.
    public let rawValue: String
    /// Creates a code.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { rawValue }

    /// The bytes are not a message: not JSON, truncated, a field missing or of the wrong type.
    public static let malformed = Code(rawValue: "malformed")
    /// The message names another format, or a format number this receiver does not read.
    public static let unsupportedFormat = Code(rawValue: "unsupportedFormat")
    /// The message is larger than the receiver accepts.
    public static let tooLarge = Code(rawValue: "tooLarge")
    /// A batch's `from` is not the version the receiver holds, or its `to` is not after it.
    public static let versionMismatch = Code(rawValue: "versionMismatch")
    /// A position is outside the list it addresses.
    public static let positionOutOfRange = Code(rawValue: "positionOutOfRange")
    /// The section or item at a position is not the one the batch names, or an id is unknown.
    public static let idMismatch = Code(rawValue: "idMismatch")
    /// An inserted section or item has an id the list already holds, or the batch names one twice.
    public static let duplicateID = Code(rawValue: "duplicateID")
    /// A batch with no stage, or a stage with no change (G4).
    public static let emptyBatch = Code(rawValue: "emptyBatch")
    /// A message that this side of the connection does not expect, such as a batch sent to a server.
    public static let unexpectedMessage = Code(rawValue: "unexpectedMessage")
    /// A `subscribe` names a query the server does not declare (format 2).
    public static let unknownQuery = Code(rawValue: "unknownQuery")
    /// A `subscribe` gives a query a parameter it does not take, leaves one out, gives one of the wrong
    /// kind, or a value the query refuses (format 2).
    public static let invalidParameters = Code(rawValue: "invalidParameters")
    /// The server could not evaluate the query on its current state (a closure of its own threw); the
    /// detail names the query, never a row (format 2).
    public static let queryFailed = Code(rawValue: "queryFailed")
    /// An edit does not apply to the state it was made on: an unknown id or anchor (or one outside the
    /// client's scope, which reads the same), an inserted id that exists, an item the client's scope
    /// may not write. The detail names the operation's problem (format 2).
    public static let invalidEdit = Code(rawValue: "invalidEdit")
    /// The server takes no edits, or refused this one for a reason of its own (its storage failed); the
    /// edit was not made (format 2).
    public static let editNotMade = Code(rawValue: "editNotMade")
    /// No answer came: the task waiting for an edit's answer was cancelled, or its source went away. The
    /// edit may still be made; it stays pending while its source lives.
    public static let unanswered = Code(rawValue: "unanswered")
    /// The server has no answer for the edit's id and keeps answers only of edits made at newer versions
    /// than the edit's base: it may have made the edit and forgotten the answer, so it does not make it
    /// again. The edit is not shown any more; the client's state says whether it was made (format 2).
    public static let editExpired = Code(rawValue: "editExpired")
    /// The client's scope holds as many subscribed connections as the server allows, or as many views, or
    /// a subscribe names more views than it allows (``WireLimits``); the detail names the limit (and the
    /// view past it). Nothing changed, and the connection stays usable.
    public static let limitReached = Code(rawValue: "limitReached")
    /// The client's scope made subscribes, or views no one held, faster than the server's rate allows
    /// (``WireLimits/subscribes``, ``WireLimits/freshViews``): retry after ``WireError/retryAfter``.
    /// Nothing changed, and the connection stays usable.
    public static let rateLimited = Code(rawValue: "rateLimited")
    /// The edit's id was answered before for another edit (other operations, by its
    /// ``WireEdit/fingerprint``): a client counted its ids again after forgetting what it sent. The edit
    /// was not made, and the other edit's answer is not given (format 2).
    public static let editIDReused = Code(rawValue: "editIDReused")
    /// A client asked for the answer to an edit it made and was answered, but it keeps only its newest
    /// ``ReplicaState/keptAnswers`` answers (across restarts, with a store) and this one is older; the
    /// client's state says whether it was made.
    public static let answerForgotten = Code(rawValue: "answerForgotten")
    /// A client asked for the answer to an edit id it never made: not one of its own ids.
    public static let unknownEdit = Code(rawValue: "unknownEdit")
    /// A read's token is not one the service issued for this view to the reader's scope: forged, altered,
    /// or another scope's (``WireRead/View/token(_:)``). Nothing of the view is sent.
    public static let readTokenInvalid = Code(rawValue: "readTokenInvalid")
    /// A read's token was the service's, and its life ended: read by query again for a new one.
    public static let readTokenExpired = Code(rawValue: "readTokenExpired")
    /// The transport could not read the credentials of a read over HTTP: who the reader is, and so its
    /// scope, is unknown (401).
    public static let unauthorized = Code(rawValue: "unauthorized")
  }

  /// What was wrong.
  public var code: Code
  /// Where: the stage, the kind of change and the position or id, or the versions.
  public var detail: String
  /// When to ask again, in seconds (to the millisecond), for a refusal that time lifts
  /// (``Code-swift.struct/rateLimited``); `retryAfter` on the wire.
  public var retryAfter: Double?

  /// Creates an error.
  public init(_ code: Code, _ detail: String, retryAfter: Double? = nil) {
    self.code = code
    self.detail = detail
    self.retryAfter = retryAfter
  }

  /// `code: detail`.
  public var description: String { "\(code): \(detail)" }
}

extension WireError {
  /// The wire's name for a problem the model found applying a stage: `stage 0 item delete at …`.
  @usableFromInline
  init(_ problem: StagePatchProblem) {
    let code: Code =
      switch problem.kind {
      case .empty: .emptyBatch
      case .positionOutOfRange: .positionOutOfRange
      case .idMismatch: .idMismatch
      case .duplicateID: .duplicateID
      }
    self.init(code, "stage \(problem.stage) \(problem.detail)")
  }
}
