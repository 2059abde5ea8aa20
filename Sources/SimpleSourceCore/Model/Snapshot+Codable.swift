// Codable conformance of Snapshot: encoded as its sections, validated again when decoded.

extension Snapshot: Encodable where Section: Encodable {
  /// Encodes the sections as an array.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(sections)
  }
}

extension Snapshot: Decodable where Section: Decodable {
  /// Decodes an array of sections and validates it.
  ///
  /// - Throws: `DecodingError.dataCorrupted` whose `underlyingError` is the ``DataSourceError`` when the
  ///   decoded sections hold duplicate ids.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let sections = try container.decode([Section].self)
    do {
      try self.init(sections)
    } catch {
      throw DecodingError.dataCorrupted(
        .init(codingPath: decoder.codingPath, debugDescription: "\(error)", underlyingError: error))
    }
  }
}
