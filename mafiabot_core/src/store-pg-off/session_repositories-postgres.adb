--  The static build's: Debian ships libpq only as a shared library that a
--  static executable can link (its libpq.a needs GSSAPI's and LDAP's static
--  libraries, which Debian does not ship), so this build refuses every URL
--  and names the build that has the client.

package body Session_Repositories.Postgres is

   procedure Open
     (Url             : String;
      Capacity        : Positive;
      Busy_Timeout_Ms : Positive;
      Keeps_Budgets   : Boolean;
      Proposed_Secret : String;
      Opened          : out Repository_Access;
      Secret          : out Ada.Strings.Unbounded.Unbounded_String;
      Result          : out Status)
   is
      pragma Unreferenced
        (Url, Capacity, Busy_Timeout_Ms, Keeps_Budgets, Proposed_Secret);
   begin
      Opened := null;
      Secret := Ada.Strings.Unbounded.Null_Unbounded_String;
      Result :=
        (Failed => True,
         Reason => Ada.Strings.Unbounded.To_Unbounded_String
           ("in PostgreSQL: this build of the body (mafiabot, linked"
            & " statically) has no PostgreSQL client; run mafiabot-dynamic"
            & " (make build-dynamic) for a --state postgresql:// URL"));
   end Open;

end Session_Repositories.Postgres;
