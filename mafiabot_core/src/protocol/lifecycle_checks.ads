--  The protocol's ordering rules, apart from dispatch (as AdaCore's
--  language server keeps them in LSP.Lifecycle_Checkers): which era a
--  request belongs to, whether its protocol version is served, and whether
--  the body is in the state its method needs.  One entry point, Check,
--  returns a status; Hermes_Protocol maps each status to its JSON-RPC error
--  and dispatches only what Check allows.
--
--  The rules, in the order they apply (the first that fails decides):
--  1. A request whose _meta names a protocol version is modern.  It must
--     name the modern version (else Unsupported_Version) and carry the
--     client's capabilities as an object (else Missing_Capabilities).
--  2. initialize is answered once in a body's life (else
--     Already_Initialized), in either era.
--  3. A legacy request other than initialize, ping and server/discover
--     needs initialize answered first (else Not_Initialized).
--
--  Written for the prover: no state, no exceptions, every result stated by
--  a contract case.  What a method means and whether its parameters are
--  well formed is dispatch's business, not the lifecycle's.

package Lifecycle_Checks
  with SPARK_Mode => On, Pure
is

   type Method_Kind is
     (Initialize, Ping, Discover, Tools_List, Tools_Call, Unknown);
   --  The methods the body answers; Unknown for any other name

   function Method_Of (Name : String) return Method_Kind is
     (if Name = "initialize" then Initialize
      elsif Name = "ping" then Ping
      elsif Name = "server/discover" then Discover
      elsif Name = "tools/list" then Tools_List
      elsif Name = "tools/call" then Tools_Call
      else Unknown)
   with Global => null;

   subtype Before_Initialize is Method_Kind range Initialize .. Discover;
   --  What a legacy client may send before initialize is answered

   type Version_Claim is (Unstated, Modern, Other);
   --  What a request's _meta says of the protocol version: nothing (a
   --  legacy request), the modern version, or some other

   type Request_Facts is record
      Method             : Method_Kind;
      Version            : Version_Claim;
      Capabilities_Given : Boolean;
      --  _meta carries the client's capabilities as an object
   end record;
   --  What the ordering rules look at in one request

   type Status is
     (Allowed,
      Unsupported_Version,
      Missing_Capabilities,
      Already_Initialized,
      Not_Initialized);

   type Verdict is record
      Outcome : Status;
      Is_Modern : Boolean;
      --  The request is answered in the modern era
   end record;

   function Check
     (Initialized : Boolean; Request : Request_Facts) return Verdict
   with
     Global         => null,
     Post           => Check'Result.Is_Modern = (Request.Version /= Unstated),
     Contract_Cases =>
       (Request.Version = Other
          => Check'Result.Outcome = Unsupported_Version,
        Request.Version = Modern and then not Request.Capabilities_Given
          => Check'Result.Outcome = Missing_Capabilities,
        ((Request.Version = Unstated
          or else (Request.Version = Modern
                   and then Request.Capabilities_Given))
         and then Request.Method = Initialize
         and then Initialized)
          => Check'Result.Outcome = Already_Initialized,
        (Request.Version = Unstated
         and then not Initialized
         and then (Request.Method not in Before_Initialize))
          => Check'Result.Outcome = Not_Initialized,
        others
          => Check'Result.Outcome = Allowed);
   --  Initialized: a legacy initialize has been answered

end Lifecycle_Checks;
