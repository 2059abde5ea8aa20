// A view's reads over HTTP: the route that answers `WireRead`s, for readers a cache in front fans out.

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle
import SimpleSource

/// Serves reads of a ``WireService``'s views over HTTP (`GET`), as ``WireService/read(_:scope:origin:ifNoneMatch:policy:)``
/// answers them: the changes after the reader's offset, long polls, answers a shared cache may keep
/// (`Cache-Control`, `ETag`, `304`), and read tokens held to the reader's scope.
///
/// ```swift
/// let reads = WireHTTPReads(service: service, policy: WireReadPolicy(secret: secret)) { request in
///   request.headers[HTTPField.Name("X-User")!]  // the reader's scope, from its credentials
/// }
/// reads.route("/read", on: router)
/// ```
///
/// The URL's query is ``WireRead/queryItems``; the reader's credentials are read by `scope`, as for a
/// WebSocket (throwing answers 401 with an `error` message, `unauthorized`, and `no-store`). A reader's
/// address may run at most `readsPerAddress` reads at once (a long poll holds one for up to the policy's
/// hold): past it, 429. Behind a proxy every reader has the proxy's address: pass `Int.max`, and limit
/// there.
public final class WireHTTPReads<Section: SectionType, Scope: Hashable & Sendable>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// The scope of a reader, read from its request; throwing refuses the read.
  public typealias ScopeOf = @Sendable (WebSocketUpgradeRequest) throws -> Scope

  let service: WireService<Section, Scope>
  let policy: WireReadPolicy
  let readsPerAddress: Int
  let scope: ScopeOf
  let before: @Sendable (WireRead) async -> Void
  /// The reads each address runs now.
  let running = NIOLockedValueBox(AddressCounts())

  /// Serves the reads of `service`'s views.
  /// - Parameters:
  ///   - service: The service whose views are read.
  ///   - policy: The tokens' secret, the long poll's hold, and what caches may keep.
  ///   - readsPerAddress: The reads one address may run at once; `Int.max` behind a proxy.
  ///   - before: Runs before each read is answered: a service that follows a log of several instances reads
  ///     the log there up to the read's offset.
  ///   - scope: The reader's scope, from its request (a cookie, a header); throwing answers 401.
  /// - Complexity: O(1).
  public init(
    service: WireService<Section, Scope>, policy: WireReadPolicy, readsPerAddress: Int = 64,
    before: @escaping @Sendable (WireRead) async -> Void = { _ in }, scope: @escaping ScopeOf
  ) {
    self.service = service
    self.policy = policy
    self.readsPerAddress = readsPerAddress
    self.before = before
    self.scope = scope
  }

  /// Adds the `GET` route at `path` to `router`.
  /// - Complexity: O(1); each read then costs what ``WireService/read(_:scope:origin:ifNoneMatch:policy:)``
  ///   states.
  public func route(_ path: RouterPath, on router: Router<WireRequestContext>) {
    router.get(path) { request, context in
      await self.answer(request, address: context.channel.remoteAddress?.ipAddress)
    }
  }

  /// Adds a `GET` route at `path` to `router` that answers whether a reader may make a read, without
  /// reading the view (``WireService/authorize(_:scope:policy:)``): for a cache in front, which asks it
  /// before every answer it gives from what it keeps (nginx's `auth_request`, keyed by the token and the
  /// reader's credentials). The read is the request's `X-Original-URI` (the URI the cache was asked for:
  /// `proxy_set_header X-Original-URI $request_uri`), or the request's own URI when it has none; the
  /// reader's credentials are the request's, read by `scope`. A read that does not parse is allowed to go
  /// on (204, `no-store`): the read itself is then answered 400, which no cache keeps.
  /// - Complexity: O(1); each request then costs a token's check.
  public func routeAuthorization(_ path: RouterPath, on router: Router<WireRequestContext>) {
    router.get(path) { request, _ in
      let original = request.headers[HTTPField.Name("X-Original-URI")!].map { URI($0) } ?? request.uri
      let read: WireRead
      do throws(WireError) {
        read = try WireRead(queryItems: original.queryParameters.map { (String($0.key), String($0.value)) })
      } catch {
        // Allowed to go on: the read itself is answered 400, `no-store`, so a cache keeps nothing for it.
        return Self.response(
          WireReadAnswer(status: 204, headers: [("Cache-Control", "no-store")], body: Data()))
      }
      let upgrade = WebSocketUpgradeRequest(uri: original, headers: request.headers, address: nil)
      guard let scope = try? self.scope(upgrade) else {
        return Self.response(
          WireService<Section, Scope>.refusal(
            WireError(.unauthorized, "the reader's credentials do not read")))
      }
      return Self.response(self.service.authorize(read, scope: scope, policy: self.policy))
    }
  }

  /// Adds a `POST` route at `path` to `router` that makes the edits of clients that follow their views by
  /// reads (``WireService/edit(_:scope:)``): the body is one `edit` message, the answer `confirmed` or
  /// `refused` (200, `no-store`), once per (scope, edit id), so a client resends an edit whose answer it
  /// did not get. The writer's credentials are read by `scope`, as a reader's (throwing answers 401); a body
  /// over `WireCoder.maxClientMessageBytes` (1 MiB) is 413, one that is not an edit 400, each with an
  /// `error` message. An edit counts against the address's `readsPerAddress` while it is made.
  ///
  /// ```swift
  /// reads.routeEdits("/edit", on: router)
  /// ```
  /// - Complexity: O(1); each edit then costs what ``WireService/edit(_:scope:)`` states.
  public func routeEdits(_ path: RouterPath, on router: Router<WireRequestContext>) {
    router.post(path) { request, context in
      let upgrade = WebSocketUpgradeRequest(
        uri: request.uri, headers: request.headers, address: context.channel.remoteAddress?.ipAddress)
      let scope: Scope
      do {
        scope = try self.scope(upgrade)
      } catch {
        return Self.response(
          WireService<Section, Scope>.refusal(
            WireError(.unauthorized, "the writer's credentials do not write")))
      }
      let counted = upgrade.address ?? "unknown"
      guard self.running.withLockedValue({ $0.enter(counted, limit: self.readsPerAddress) }) else {
        return Self.response(
          WireService<Section, Scope>.refusal(
            WireError(
              .limitReached, "this address runs \(self.readsPerAddress) requests at once, as many as allowed")
          ))
      }
      defer { self.running.withLockedValue { $0.leave(counted) } }
      let body: ByteBuffer
      do {
        body = try await request.body.collect(upTo: WireCoder.maxClientMessageBytes)
      } catch {
        var answer = WireService<Section, Scope>.refusal(
          WireError(.tooLarge, "an edit over HTTP has at most \(WireCoder.maxClientMessageBytes) bytes"))
        answer.status = 413
        return Self.response(answer)
      }
      return Self.response(await self.service.edit(Data(buffer: body), scope: scope))
    }
  }

  /// The response to one read.
  func answer(_ request: Request, address: String?) async -> Response {
    let upgrade = WebSocketUpgradeRequest(uri: request.uri, headers: request.headers, address: address)
    let read: WireRead
    let scope: Scope
    do {
      read = try WireRead(
        queryItems: request.uri.queryParameters.map { (String($0.key), String($0.value)) })
    } catch {
      return Self.response(WireService<Section, Scope>.refusal(error))
    }
    do {
      scope = try self.scope(upgrade)
    } catch {
      return Self.response(
        WireService<Section, Scope>.refusal(WireError(.unauthorized, "the reader's credentials do not read")))
    }
    let counted = address ?? "unknown"
    guard running.withLockedValue({ $0.enter(counted, limit: readsPerAddress) }) else {
      return Self.response(
        WireService<Section, Scope>.refusal(
          WireError(
            .limitReached, "this address runs \(readsPerAddress) reads at once, as many as the server allows")
        ))
    }
    defer { running.withLockedValue { $0.leave(counted) } }
    await before(read)
    // A server shutting down answers its long polls at once (204) rather than holding its stop for them.
    let answer = await cancelWhenGracefulShutdown {
      await self.service.read(
        read, scope: scope, origin: self.readsPerAddress == .max ? nil : address,
        ifNoneMatch: request.headers[.ifNoneMatch], policy: self.policy)
    }
    return Self.response(answer)
  }

  static func response(_ answer: WireReadAnswer) -> Response {
    var headers = HTTPFields()
    for (name, value) in answer.headers {
      if let name = HTTPField.Name(name) { headers.append(HTTPField(name: name, value: value)) }
    }
    return Response(
      status: HTTPResponse.Status(code: answer.status), headers: headers,
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
  }
}
