"""AdapterContracts: the contract, its schema, validators, acceptance policy, lifecycle, manifests
and pins."""
