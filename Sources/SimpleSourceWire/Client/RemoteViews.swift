// A client of several views of one source on one connection: every view is held, and shown, at one version
// of the source.

public import Foundation
public import SimpleSourceCore

/// Several views of a ``WireService``'s source on one connection, each a query with its parameters (or
/// the whole of the connection's scope), all held at one version of the source.
///
/// ```swift
/// let screen = RemoteViews<Column>(views: [
///   "column": WireQueryRequest("column", ["id": .string("todo")]),
///   "search": WireQueryRequest("search", ["text": .string("milk")]),
/// ])
/// try await socket.send(WireCoder().encode(screen.subscribeRequest))
/// for try await data in socket.messages { try await screen.receive(data) }
/// // Elsewhere: every element holds every view at one version.
/// for await update in screen.updates { render(update.snapshots["column"], update.snapshots["search"]) }
/// ```
///
/// The server sends every view's state at one version (``WireMessage/views(stream:version:snapshots:)``),
/// then, for each later version that changed any view, the batches of the views it changed in one
/// message (``WireMessage/viewBatches(from:to:batches:)``). This source applies a message's batches all at
/// once, after checking every one of them: its ``snapshots`` and each element of ``updates`` are the views
/// at one version of the source, never two. A message that does not apply is refused with a
/// ``WireError`` and changes nothing. Each view is its own slice: a version that changes nothing a view
/// shows sends nothing for it.
///
/// Writes go through a ``RemoteDataSource`` or the server's API; this source only reads. On a new
/// connection, send ``subscribeRequest`` again: it names the version held, and the server resumes the
/// views from there when it still retains it, or sends their states.
public actor RemoteViews<Section: SectionType>
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// Every view at one version.
  public struct Update: Sendable {
    /// The source's version the views are at.
    public let version: Int
    /// Each view's state, by the name the client gave it.
    public let snapshots: [String: Snapshot<Section>]
  }

  /// The views asked for, by name: a query with its parameters, or `nil` for the whole scope.
  public nonisolated let views: [String: WireQueryRequest?]
  /// The stream held, once the views' states came.
  public private(set) var stream: String?
  /// The source's version every view is held at; `nil` before the views' states came.
  public private(set) var version: Int?
  /// Each view's state at ``version``.
  public private(set) var snapshots: [String: Snapshot<Section>] = [:]
  /// The last `error` message the server sent (a refused subscribe, a view that could not be evaluated).
  public private(set) var serverError: WireError?
  /// Every view at one version, after each message that changed them; a consumer that lags gets the
  /// newest.
  public nonisolated let updates: AsyncStream<Update>
  private let continuation: AsyncStream<Update>.Continuation

  /// Follows `views`, each under the name given.
  public init(views: [String: WireQueryRequest?]) {
    self.views = views
    (updates, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
  }

  /// The message that subscribes the connection to ``views``: send it on each new connection. Once the
  /// views' states came, it names the stream and version held, so that the server resumes them.
  public var subscribeRequest: WireMessage<Section> {
    .subscribeViews(views, stream: stream, from: stream == nil ? nil : version)
  }

  /// Receives one message's bytes from the server.
  /// - Throws: ``WireError``, as ``receive(_:)-(WireMessage<Section>)``, or for bytes that are not a message.
  public func receive(_ data: Data) throws(WireError) {
    try receive(WireCoder().decode(data, as: Section.self))
  }

  /// Receives one message from the server: the views' states, their batches, or an error.
  /// - Throws: ``WireError``: `versionMismatch` for batches that do not start at ``version``;
  ///   `idMismatch` for a view not asked for, or states that leave one out; a batch's own refusal;
  ///   `unexpectedMessage` for a message of another kind. Nothing changes then.
  /// - Complexity: the states: O(size); batches: O(*k* log *n*) for each view's *k* changes.
  public func receive(_ message: WireMessage<Section>) throws(WireError) {
    switch message {
    case .views(let stream, let version, let snapshots):
      guard Set(snapshots.keys) == Set(views.keys) else {
        throw WireError(
          .idMismatch, "views \(snapshots.keys.sorted()) are not the ones asked for, \(views.keys.sorted())")
      }
      (self.stream, self.version, self.snapshots) = (stream, version, snapshots)
    case .resumed(let stream, let version):
      guard stream == self.stream, version == self.version else {
        throw WireError(
          .versionMismatch,
          "resumed \(stream) at \(version), holding \(self.stream ?? "nothing") at \(self.version.map(String.init) ?? "none")"
        )
      }
      return
    case .viewBatches(let from, let to, let batches):
      guard let version, from == version, to > from else {
        throw WireError(
          .versionMismatch, "view batches \(from)→\(to) at version \(version.map(String.init) ?? "none")")
      }
      var next = snapshots
      for (name, batch) in batches {
        guard let held = next[name] else {
          throw WireError(.idMismatch, "a batch of view \(name), not asked for")
        }
        guard batch.from == from, batch.to == to else {
          throw WireError(.versionMismatch, "view \(name)'s batch \(batch.from)→\(batch.to) in \(from)→\(to)")
        }
        next[name] = try batch.applied(to: held).snapshot
      }
      (self.version, snapshots) = (to, next)
    case .error(let error):
      serverError = error
      return
    case .confirmed, .refused:
      return
    default:
      throw WireError(.unexpectedMessage, "a \(message.typeName) message sent to a client of views")
    }
    continuation.yield(Update(version: version ?? 0, snapshots: snapshots))
  }

  deinit { continuation.finish() }
}
