// How a transport takes a view's batches without a task per client: a synchronous sink, and the frame
// it is handed, encoded once for every client of the view.

public import Foundation
import SimpleSourceCore

/// One message's bytes as a session hands them to its ``WireSink``: the same object for every client of
/// a view that takes a batch in one format, so a transport can recognise it (by identity) and make its
/// own form of the bytes (a framed buffer) once for all the clients it writes to.
public final class WireFrame: Sendable {
  /// The message's JSON bytes.
  public let bytes: Data

  /// A frame of `bytes`: a service makes one per batch, view and format; a transport's tests make their own.
  public init(bytes: Data) { self.bytes = bytes }
}

/// Writes one message to a client without waiting: it queues the frame on the client's connection and
/// returns `true`, or returns `false` when the connection cannot take it now (its buffer is full, or it
/// closed). See ``WireService/session(scope:origin:pacing:sink:send:)``.
///
/// It is called by one of the writers of the scope's publisher (outside every lock of the service and the
/// session), or by the session's own task for a batch that was waiting when it asked; never by both at
/// once. It should not wait: one that blocks holds the publisher's writer, and the sessions queued behind
/// it wait until the next batch is published (which starts a second writer, or wakes them to catch up
/// through `send`). It may end its own session.
public typealias WireSink = @Sendable (WireFrame) -> Bool

/// What a view's sessions share of their encodings, per format: the newest reset's bytes, and the newest
/// batches' frames. Each is encoded once, then shared by every client that connects at that version, or
/// that the scope's publisher writes that batch to.
final class SharedEncodings: Sendable {
  private let resets = Locked<[Int: (version: Int, bytes: Data)]>([:])
  private let frames = Locked<[Int: [(from: Int, to: Int, frame: WireFrame)]]>([:])
  private let encodings: Locked<Int>

  /// Counts each reset's encoding in `encodings`.
  init(counting encodings: Locked<Int>) { self.encodings = encodings }

  /// The bytes of the reset at `version` in `format`, made with `encode` unless they are held.
  /// - Complexity: O(1) when held; `encode` otherwise. Two clients that connect at once may both encode.
  func reset(version: Int, format: Int, encode: () -> Data) -> Data {
    if let held = resets.withLock({ $0[format] }), held.version == version { return held.bytes }
    let bytes = encode()
    encodings.withLock { $0 += 1 }
    resets.withLock { resets in
      if (resets[format]?.version ?? .min) <= version { resets[format] = (version, bytes) }
    }
    return bytes
  }

  /// The frame of the view's batch from `from` to `to` in `format`, made with `encode` unless it is held.
  /// A view's batches are told apart by their versions: each version of a view has one state. The
  /// publisher's writers (a second starts when the first is held, and may be at another batch) ask for a batch's frame for each of its
  /// sessions in turn, so the newest few are held. Two writers racing may both encode it; the first stored
  /// is the one both send.
  /// - Complexity: O(1) when held; `encode` otherwise.
  func frame(from: Int, to: Int, format: Int, encode: () -> Data) -> WireFrame {
    if let held = frames.withLock({ Self.held($0[format], from: from, to: to) }) { return held }
    let frame = WireFrame(bytes: encode())
    return frames.withLock { frames in
      var held = frames[format] ?? []
      if let stored = Self.held(held, from: from, to: to) { return stored }
      held.append((from, to, frame))
      if held.count > Self.framesHeld { held.removeFirst(held.count - Self.framesHeld) }
      frames[format] = held
      return frame
    }
  }

  /// How many of the newest batches' frames are held per format.
  static let framesHeld = 4

  private static func held(_ frames: [(from: Int, to: Int, frame: WireFrame)]?, from: Int, to: Int)
    -> WireFrame?
  {
    frames?.last { $0.from == from && $0.to == to }?.frame
  }
}
