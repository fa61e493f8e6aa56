/// `GET …/cohorts`: the cohorts of a set as stored, and the flags that use each.
public struct CohortList: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// Its version.
    public var version: Int
    /// Each cohort's JSON, by name.
    public var cohorts: [String: RawJSON]
    /// The keys of the flags that use each cohort.
    public var usedBy: [String: [String]]

    /// A list.
    public init(set: String, version: Int, cohorts: [String: RawJSON], usedBy: [String: [String]]) {
        self.set = set
        self.version = version
        self.cohorts = cohorts
        self.usedBy = usedBy
    }
}

/// `GET …/cohorts/{name}`: one cohort as stored, and the flags that use it.
public struct CohortAnswer: APIAnswer, Codable, Hashable {
    /// The set.
    public var set: String
    /// Its version.
    public var version: Int
    /// The cohort's name.
    public var name: String
    /// The cohort's JSON.
    public var cohort: RawJSON
    /// The keys of the flags that use it.
    public var usedBy: [String]

    /// A cohort.
    public init(set: String, version: Int, name: String, cohort: RawJSON, usedBy: [String]) {
        self.set = set
        self.version = version
        self.name = name
        self.cohort = cohort
        self.usedBy = usedBy
    }
}

/// `PUT …/cohorts/{name}`: the cohort, created or replaced.
public struct PutCohortRequest: MutationRequest, Hashable {
    /// The cohort, as in a flag-set document.
    public var cohort: RawJSON
    /// Why, for the audit log.
    public var reason: String?
    /// Write even what active clients cannot evaluate.
    public var allowIncompatible: Bool?

    /// A cohort to write.
    public init(cohort: RawJSON, reason: String? = nil, allowIncompatible: Bool? = nil) {
        self.cohort = cohort
        self.reason = reason
        self.allowIncompatible = allowIncompatible
    }
}
