// A remote source connected to a service in the same process, in one call: the client's messages pumped
// to a session of its own, the session's bytes decoded by the remote source, and a close that keeps the
// client's pending edits for the next connection.

import Foundation
public import SimpleSourceCore

extension WireService {
  /// Connects `remote` to this service in the same process, as a client of `scope`: for tests, and for
  /// services whose clients live beside them (a cache, a worker, an in-process replica).
  ///
  /// The connection is what a transport would be, without one: `remote` sends its subscribe (resuming
  /// from the stream and version it holds), its pending edits and each edit made while it stays open to
  /// a ``WireSession`` of its own, in order; the session's messages are encoded, decoded and received by
  /// `remote` in order (a message it refuses is its ``RemoteDataSource/lastError``; it then follows nothing
  /// until it connects again). ``WireConnection/close()`` ends the connection; connecting again resumes.
  ///
  /// ```swift
  /// let remote = RemoteDataSource<Channel>()
  /// let connection = await service.connect(remote, scope: "ada")
  /// print(await connection.started())  // .reset(version: 0): it held nothing
  /// _ = try await remote.edit([.insert([message], .end(of: "general"))])  // answered by the service
  /// await connection.close()  // the edits made now stay pending on `remote`
  /// let again = await service.connect(remote, scope: "ada")  // resumes from what `remote` holds
  /// ```
  /// - Parameters:
  ///   - remote: The client. It should have no other connection.
  ///   - scope: What the client may see.
  /// - Returns: The open connection.
  /// - Complexity: O(1) besides the session's subscribe; each message then costs its encoding and
  ///   decoding.
  public nonisolated func connect(_ remote: RemoteDataSource<Section>, scope: Scope) async -> WireConnection<
    Section
  > {
    let (outbox, outgoing) = AsyncStream.makeStream(of: WireConnection<Section>.Outbound.self)
    // A refused message is kept as the remote source's `lastError`; the session goes on.
    let session = session(scope: scope) { bytes in try? await remote.receive(bytes) }
    await remote.connect { outgoing.yield(.message($0)) }
    // One task takes the client's messages to the session, in the order the client sent them.
    let pump = Task.schedulable("pumping an in-process connection") {
      for await outbound in outbox {
        switch outbound {
        case .message(let message): await session.receive(message)
        case .flush(let done): done.resume()
        }
      }
      await session.close()
    }
    return WireConnection(remote: remote, outgoing: outgoing, pump: pump) { await session.settled() }
  }
}

extension WireService where Scope == NoScope {
  /// Connects `remote` to this service in the same process; see ``connect(_:scope:)``.
  public nonisolated func connect(_ remote: RemoteDataSource<Section>) async -> WireConnection<Section> {
    await connect(remote, scope: NoScope())
  }
}

/// A ``RemoteDataSource`` connected to a ``WireService`` in the same process
/// (``WireService/connect(_:scope:)``).
public final class WireConnection<Section: SectionType>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// What the client sends, in order, and the marks of those who wait for it.
  enum Outbound: Sendable {
    case message(WireMessage<Section>)
    case flush(CheckedContinuation<Void, Never>)
  }

  /// The client.
  public let remote: RemoteDataSource<Section>
  private let outgoing: AsyncStream<Outbound>.Continuation
  private let pump: Task<Void, Never>
  private let settle: @Sendable () async -> Void

  init(
    remote: RemoteDataSource<Section>, outgoing: AsyncStream<Outbound>.Continuation, pump: Task<Void, Never>,
    settle: @escaping @Sendable () async -> Void
  ) {
    self.remote = remote
    self.outgoing = outgoing
    self.pump = pump
    self.settle = settle
  }

  /// Returns once the service has taken every message the client sent before the call and the client
  /// holds what the service sent for them (and for the writes made before the call): its subscribe's
  /// reset or resume, its edits' answers, the batches of its scope. Tests await it instead of sleeping.
  /// - Complexity: the hops of the messages in flight.
  public func settled() async {
    await withCheckedContinuation { done in
      // A closed connection takes no mark: nothing is in flight any more.
      guard case .enqueued = outgoing.yield(.flush(done)) else { return done.resume() }
    }
    await settle()
  }

  /// How this connection began: whether the service resumed from the version the client held, or sent
  /// its whole state. Waits for the service's answer to the subscribe (``settled()``).
  /// - Returns: the start; `nil` when the connection closed before the service answered.
  public func started() async -> RemoteDataSource<Section>.ConnectionStart? {
    await settled()
    return await remote.connectionStart
  }

  /// Closes the connection, as a transport that goes away: the client's edits made from now on wait on
  /// it for the next connection, and the session ends.
  /// - Complexity: the messages still in flight.
  public func close() async {
    await remote.disconnect()
    outgoing.finish()
    await pump.value
  }
}
