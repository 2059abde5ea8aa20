// Compiled into the skin's module by .ci/skins-typecheck only: each skin class conforms to the stand-in's
// protocols of the SDK's optional requirements it implements, so a misspelt or mistyped witness fails.
public import UIKit

extension TableViewDataSource: UITableViewDataSourceOptionals {}
extension CollectionViewDataSource: UICollectionViewDataSourceOptionals {}
extension TableViewInteractionResponder: UITableViewDelegateOptionals, UITableViewDataSourceEditingOptionals {}
extension CollectionViewInteractionResponder: UICollectionViewDelegateOptionals {}
extension TableCellTextView: UITextViewDelegateOptionals {}
