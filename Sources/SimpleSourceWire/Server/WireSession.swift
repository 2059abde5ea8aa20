// One client's connection to a WireService: its messages in, the messages to send out.

public import Foundation
public import SimpleSourceCore

/// One client's connection to a ``WireService``, whatever carries its bytes (a WebSocket in Hummingbird,
/// Vapor or plain NIO, a pipe, a test).
///
/// Give it each message the client sent, in order, with ``receive(_:)-(Data)``; it sends, through the
/// `send` closure the service was given, everything the client receives:
/// - a `subscribe` (format 1 or 2) gets a `reset` or `resumed` of the whole source or the query it names,
///   within the session's scope, then a `batch` for every change; messages are written in the format
///   number the client wrote; a query that cannot be evaluated at the version the client starts from is
///   refused (`queryFailed`), and one that fails later ends the subscription with that error;
/// - a second `subscribe` replaces the first: the first's last message is sent before the second's reset
///   or resume;
/// - a `subscribeViews` (format 3) replaces it with several views, projected from one subscription to the
///   scope's state (each view once for every session of the scope that asks for it), whose batches of one
///   version are sent in one message (see ``RemoteViews``);
/// - an `edit` (format 2) is made by the service's ``WireWriter``, and answered `confirmed` after every batch
///   of its version that the subscription carries (so the client holds the edit when the answer arrives),
///   or `refused` (after the subscription's first message); the session reads the client's next message
///   meanwhile only when the transport calls ``receive(_:)-(Data)`` concurrently;
/// - a message it refuses (bytes that are not a message, another format, an unknown query, bad
///   parameters, a message a client does not send) gets an `error` message, and changes nothing: the
///   subscription it had goes on, and the connection stays usable.
///
/// Call ``close()`` when the connection ends. `send` is called by one task at a time for batches, and may
/// be called from ``receive(_:)-(Data)`` for an error at the same time: each call is one whole message.
/// A `send` that throws ends the subscription (the client went away); the session still answers later
/// messages. With a sink (``WireService/session(scope:origin:pacing:sink:send:)``), batches reach the client
/// through it while the connection takes them, and through `send` otherwise (answers and errors always go
/// through `send`); after ``close()`` (or a second subscribe) returns, nothing of the old subscription is
/// written to either.
public actor WireSession<Section: SectionType, Scope: Hashable & Sendable>
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  // Guard map: `scope`, `formatVersion`, `current`, the last requests, `subscribedScope`, `isClosed` and
  // `turns` are the actor's. Each subscription has a task that sends its first message, which starts one
  // that sends the rest when there is a rest; both read only what they were started with: the opened feed
  // and views, and their `SendingControl` (a lock of its own, through which the actor stops them, after
  // whose `stop()` nothing is written, and on which it waits for the first message and for the end: the
  // session keeps no task's handle). Subscribes, scope changes and closing take `turns`, so each awaits the one before it; an edit's
  // answer is made in the caller's task on the service's actor. The deinit of a session never closed
  // starts one task, to leave its scope's count.
  /// The service the session belongs to.
  public nonisolated let service: WireService<Section, Scope>
  /// The session's number in its service, unique for the service's life: what its scope's limit counts.
  nonisolated let number: Int
  /// What the client may see.
  public private(set) var scope: Scope
  let pacing: Pacing
  let send: @Sendable (Data) async throws -> Void
  /// Writes batches' frames without waiting; `nil` when every message goes through `send`.
  let sink: WireSink?
  /// The largest message it reads.
  let reader = WireCoder(maxMessageBytes: WireCoder.maxClientMessageBytes)
  /// The format number of the client's last message; replies are written in it.
  var formatVersion = WireMessage<Section>.formatVersion
  /// The subscription being sent (with the scope's state and views it uses), and what stops its sending
  /// and tells how far it came.
  var current: Current?
  /// A subscription being sent: what it opened, and its sending's control. An object, not a tuple: every
  /// edit checks for one, and a reference is checked without looking its generic type up.
  final class Current {
    let opened: WireService<Section, Scope>.Opened
    let control: SendingControl<Section>

    init(opened: WireService<Section, Scope>.Opened, control: SendingControl<Section>) {
      self.opened = opened
      self.control = control
    }
  }
  /// The last subscribe, replayed when the scope changes.
  var request: (stream: String?, from: Int?, query: WireQueryRequest?)?
  /// The last subscribe of several views, replayed (from nothing) when the scope changes.
  var viewsRequest: [String: WireQueryRequest?]?
  /// The scope the current subscription was opened with.
  var subscribedScope: Scope?
  /// Where the client connects from (its address), whose rates ``WireLimits`` bounds too; `nil`: none.
  public nonisolated let origin: String?
  /// Whether ``close()`` was called.
  var isClosed = false
  /// Subscribes, scope changes and closing take turns: each sees the one before it complete.
  var turns = SessionTurns<CheckedContinuation<Void, Never>>()

  /// Whether the session answers one read over HTTP (``WireService/read(_:scope:origin:ifNoneMatch:policy:)``):
  /// its subscribe is not counted against ``WireLimits/subscribes``.
  nonisolated let isRead: Bool

  init(
    service: WireService<Section, Scope>, scope: Scope, origin: String?, pacing: Pacing, sink: WireSink?,
    isRead: Bool = false, send: @escaping @Sendable (Data) async throws -> Void
  ) {
    self.isRead = isRead
    self.service = service
    self.origin = origin
    number = service.sessionsMade.withLock { made in
      made += 1
      return made
    }
    self.scope = scope
    self.pacing = pacing
    self.sink = sink
    self.send = send
  }

  deinit {
    // A session dropped without close() stops counting against its scope's limit all the same; a closed
    // one already left, and costs no task.
    guard !isClosed else { return }
    let (service, session) = (service, number)
    Task.schedulable("leaving a service") { await service.leave(session) }
  }

  /// Receives one message's bytes from the client.
  /// - Complexity: a new view: O(*n*) predicate calls; otherwise as ``DataSourceType/wireFeed(stream:request:pacing:)``.
  public func receive(_ data: Data) async {
    let message: WireMessage<Section>
    do {
      (message, formatVersion) = try reader.read(data)
    } catch {
      await reply(error)
      return
    }
    await receive(message)
  }

  /// Receives one text message from the client (JSON text, as WebSockets carry it).
  public func receive(text: String) async { await receive(Data(text.utf8)) }

  /// Receives one decoded message from the client; replies are written in the format number of the last
  /// message read from bytes (2 when none was).
  public func receive(_ message: WireMessage<Section>) async {
    if case .edit(let edit) = message {
      await write(edit)
      return
    }
    if case .subscribeViews(let views, let stream, let from) = message {
      await takingTurn {
        do throws(WireError) {
          try await subscribeViews(views, stream: stream, from: from)
        } catch {
          await reply(error)
        }
      }
      return
    }
    guard case .subscribe(let stream, let from, let query) = message else {
      await reply(WireError(.unexpectedMessage, "a \(message.typeName) message sent to the server"))
      return
    }
    if query != nil && formatVersion < 2 {
      await reply(WireError(.unsupportedFormat, "a query needs formatVersion 2"))
      return
    }
    await takingTurn {
      do throws(WireError) {
        try await subscribe(query.map { .query($0) } ?? .scope, stream: stream, from: from)
      } catch {
        await reply(error)
      }
    }
  }

  /// Sends the client an `error` for a message the transport itself refused (a binary frame where JSON
  /// text is expected, a frame over its size limit); nothing else changes.
  public func refuse(_ error: WireError) async { await reply(error) }

  /// Changes what the client may see. A client that is subscribed gets a reset of its query within the
  /// new scope (its view's stream changes), then the batches after it.
  ///
  /// Subscribes, scope changes and ``close()`` take turns in the order they are called, each waiting for
  /// the one before it to finish: a subscribe that was opening its view when this was called finishes
  /// first, then the client is subscribed again within `scope`. When this returns, the client's
  /// subscription is of `scope` (or it was refused with an `error` message): nothing sent after it carries
  /// a row outside `scope`.
  /// - Complexity: as a new subscribe.
  public func setScope(_ scope: Scope) async {
    self.scope = scope
    await takingTurn {
      // The newest scope, read in this turn: a later call may have changed it again meanwhile.
      guard request != nil || viewsRequest != nil, subscribedScope != self.scope else { return }
      do throws(WireError) {
        if let viewsRequest {
          try await subscribeViews(viewsRequest, stream: nil, from: nil)
        } else if let request {
          try await subscribe(request.query.map { .query($0) } ?? .scope, stream: nil, from: nil)
        }
      } catch {
        // The old scope's subscription must not go on: the client is told why it has none.
        await stop()
        await service.leave(number)
        await reply(error)
      }
    }
  }

  /// Ends the session: its subscription ends and its views are released. Messages received after it are
  /// ignored; a subscribe already waiting for its turn does nothing.
  public func close() async {
    isClosed = true
    await takingTurn { await stop() }
    await service.leave(number)
  }

  /// Whether the client is subscribed (and its last subscribe was accepted).
  package var isSubscribed: Bool { current != nil }

  /// What the client is shown now, the version of its scope's state, and the stream it is sent as (tests
  /// read it, once the writes they made were sent): the scope's state, or the projection of it that its
  /// query or views make. A subscription of several views shows the first view by name.
  var following: (shown: Snapshot<Section>, version: Int, stream: String)? {
    get async {
      guard let current else { return nil }
      let stream: String
      switch current.opened.feed.start {
      case .reset(let name, _, _), .resumed(let name, _): stream = name
      default: return nil
      }
      let source = current.opened.lease?.source ?? service.source
      let (version, scope) = (await source.version.number, await source.snapshot)
      switch current.opened.shown {
      case .scope: return (scope, version, stream)
      case .query(let view): return view.project(scope).map { ($0, version, stream) }
      case .views(let views):
        return views.min { $0.key < $1.key }?.value.project(scope).map { ($0, version, stream) }
      }
    }
  }

  /// What stops the current subscription's sending task and counts its parks; `nil` when not subscribed.
  /// Tests await its parks.
  var sending: SendingControl<Section>? { current?.control }
  /// The newest version sent to the client, or held with nothing to send (G13), once its first message
  /// was sent; `nil` when not subscribed or when that message could not be sent (tests read it).
  package var clientHeldVersion: Int? {
    get async {
      guard let current, await current.control.firstMessageSent() else { return nil }
      return current.opened.feed.subscription.heldVersion.number
    }
  }

  // MARK: - Internals

  /// Runs `change` once it holds the session's turn, then hands the turn to the next change waiting.
  private func takingTurn(_ change: () async -> Void) async {
    // The body runs on this actor before the task suspends: granted at once, it resumes at once.
    await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
      if turns.enter(waiter) { waiter.resume() }
    }
    await change()
    turns.leave()?.resume()
  }

  /// Subscribes the client to what it `asked` for, from its stream and version (`stream`, `from`),
  /// replacing its subscription once the new one is open; refused, the old one goes on.
  func subscribe(_ asked: WireService<Section, Scope>.Asked, stream: String?, from: Int?)
    async throws(WireError)
  {
    guard !isClosed else { return }
    let scope = scope
    let opened = try await service.open(
      stream: stream, from: from, asking: asked, scope: scope, origin: origin, pacing: pacing,
      session: number, replacing: current?.opened, rated: !isRead)
    let format: Int
    switch asked {
    case .views: format = WireMessage<Section>.viewsFormat
    case .scope, .query: format = formatVersion
    }
    let coder = WireCoder(maxMessageBytes: reader.maxMessageBytes, formatVersion: format)
    let (send, immediate) = (send, pacing.isImmediate)
    let sink = immediate ? sink : nil
    // The old subscription stops before the new one starts sending; the new one's views and scope state
    // were acquired first, so that a view both use is kept.
    await stop()
    guard !isClosed else {
      await service.abandon(opened)
      return
    }
    switch asked {
    case .scope: (request, viewsRequest) = ((stream, from, nil), nil)
    case .query(let query): (request, viewsRequest) = ((stream, from, query), nil)
    case .views(let views): (request, viewsRequest) = (nil, views)
    }
    subscribedScope = scope
    let control = SendingControl<Section>()
    let sender = SessionSender(
      send: send, sink: sink, immediate: immediate, coder: coder, control: control, shown: opened.shown)
    // The first message in a task of its own, which then starts the one that follows the batches: a task
    // keeps the memory of its deepest call (the first state, projected and encoded) until it ends, so the
    // task that lives as long as the subscription never makes that call. What must follow the first
    // message (an edit's answer, a refusal) and closing wait on `control`, which both tasks report to:
    // no handle to a task is kept (a finished task's handle keeps its memory).
    Task.schedulable("starting a session's subscription") {
      let started = await sender.start(opened)
      control.firstMessage(sent: started != nil)
      guard let started else { return }
      Task.schedulable("sending to a session") {
        await sender.follow(opened, from: started) { control.finished() }
      }
    }
    current = Current(opened: opened, control: control)
  }

  /// Returns once every batch of the writes to the service's source made before the call has been sent
  /// to the client (`send` returned), or the subscription ended. Tests and services await this instead
  /// of sleeping.
  public func settled() async { await caughtUp(to: await service.source.version.number) }

  /// Makes the client's edit, and answers it once the subscription has sent the batches of its version.
  private func write(_ edit: WireEdit<Section>) async {
    guard !isClosed else { return }
    // The format the edit came in (2): the client may write in another before the answer is sent.
    let coder = WireCoder(formatVersion: max(formatVersion, 2))
    let answer = await service.write(edit, scope: scope)
    let message: WireMessage<Section>
    switch answer {
    case .success(let version):
      await caughtUp(to: version)
      message = .confirmed(edit: edit.id, version: version)
    case .failure(let error):
      // After the subscription's first message all the same: a client that sent its subscribe and then its
      // edit reads its reset or resume before the refusal.
      await started()
      message = .refused(edit: edit.id, error: error)
    }
    try? await send(coder.encode(message))
  }

  /// Returns once the subscription's first message (its reset, views or resume) was sent, or it ended;
  /// at once when there is none.
  private func started() async {
    guard let current else { return }
    _ = await current.control.firstMessageSent()
  }

  /// Returns once the subscription has sent every batch of the source's versions up to `version` that it
  /// carries (a view skips the versions that changed nothing it shows), or ended.
  ///
  /// Every subscription a session sends counts with the source's numbers (a view's versions are the
  /// source's), so this is one wait on the subscription's progress: its consumer (the sending task) holds
  /// a batch once it was sent (through the sink or `send`), and versions that no batch carries once it
  /// took what precedes them (G13). It holds a version past the one it started at only after it first
  /// asked for a batch, which it does once its first message is sent; for a version not past it, the wait
  /// is for that first message.
  private func caughtUp(to version: Int) async {
    guard let current else { return }
    let subscription = current.opened.feed.subscription
    if version > subscription.version.number {
      // The feed numbers its versions as the source does (a scope's state and views share its numbers).
      _ = try? await subscription.reached(Version(version, of: subscription.counter))
    } else {
      _ = await current.control.firstMessageSent()
    }
  }

  /// Stops the subscription being sent, waits until its last message is sent, and releases its scope's
  /// state and views.
  func stop() async {
    guard let stopping = current else { return }
    current = nil
    subscribedScope = nil
    stopping.control.stop()
    await stopping.control.ended()
    await service.abandon(stopping.opened)
  }

  func reply(_ error: WireError) async {
    let coder = WireCoder(formatVersion: formatVersion)
    try? await send(coder.encode(WireMessage<Section>.error(error)))
  }
}
