with AUnit.Assertions;
with Lifecycle_Checks;

package body Lifecycle_Tests is

   use AUnit.Assertions;
   use Lifecycle_Checks;

   function Outcome
     (Initialized : Boolean; Method : Method_Kind; Version : Version_Claim;
      Capabilities : Boolean := True) return Status is
     (Check (Initialized, (Method, Version, Capabilities)).Outcome);

   --  Rule 1: a modern request names the modern version and carries the
   --  client's capabilities, whatever the state and the method
   procedure Test_Version (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      for Initialized in Boolean loop
         for Method in Method_Kind loop
            Assert (Outcome (Initialized, Method, Other) = Unsupported_Version,
                    "another version is refused: " & Method'Image);
            Assert (Outcome (Initialized, Method, Other, Capabilities => False) = Unsupported_Version,
                    "before its capabilities are looked at: " & Method'Image);
            Assert (Outcome (Initialized, Method, Modern, Capabilities => False) = Missing_Capabilities,
                    "the modern version needs capabilities: " & Method'Image);
            Assert (Check (Initialized, (Method, Modern, True)).Is_Modern
                    and then Check (Initialized, (Method, Other, True)).Is_Modern,
                    "a request that names a version is modern, served or not");
            Assert (not Check (Initialized, (Method, Unstated, False)).Is_Modern,
                    "one that names none is legacy");
         end loop;
      end loop;
      Assert (Outcome (False, Tools_Call, Modern) = Allowed, "a modern request needs no initialize");
      Assert (Outcome (False, Tools_List, Unstated, Capabilities => False) = Not_Initialized,
              "a legacy request's missing capabilities are no concern of the lifecycle's");
   end Test_Version;

   --  Rule 2: initialize once, in either era
   procedure Test_Initialize_Once (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      Assert (Outcome (False, Initialize, Unstated) = Allowed, "the first initialize is answered");
      Assert (Outcome (True, Initialize, Unstated) = Already_Initialized, "a second is refused");
      Assert (Outcome (True, Initialize, Modern) = Already_Initialized, "in the modern era too");
      Assert (Outcome (False, Initialize, Modern) = Allowed, "a modern first initialize is answered");
   end Test_Initialize_Once;

   --  Rule 3: a legacy client initializes before anything but ping and
   --  server/discover
   procedure Test_Not_Initialized (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      for Method in Method_Kind loop
         Assert (Outcome (False, Method, Unstated)
                 = (if Method in Initialize | Ping | Discover then Allowed else Not_Initialized),
                 "before initialize: " & Method'Image);
         Assert (Outcome (True, Method, Unstated)
                 = (if Method = Initialize then Already_Initialized else Allowed),
                 "after initialize: " & Method'Image);
         Assert (Outcome (False, Method, Modern) = Allowed
                   or else Method = Initialize,
                 "a modern request is never refused for want of initialize: " & Method'Image);
      end loop;
   end Test_Not_Initialized;

   procedure Test_Method_Names (T : in out AUnit.Test_Cases.Test_Case'Class) is
      pragma Unreferenced (T);
   begin
      Assert (Method_Of ("initialize") = Initialize and then Method_Of ("ping") = Ping
              and then Method_Of ("server/discover") = Discover and then Method_Of ("tools/list") = Tools_List
              and then Method_Of ("tools/call") = Tools_Call, "every method by its name");
      Assert (Method_Of ("Ping") = Unknown and then Method_Of ("") = Unknown
              and then Method_Of ("tools/call ") = Unknown, "names match exactly");
   end Test_Method_Names;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Version'Access, "lifecycle: the era and the protocol version");
      Register_Routine (T, Test_Initialize_Once'Access, "lifecycle: initialize is answered once");
      Register_Routine (T, Test_Not_Initialized'Access, "lifecycle: a legacy client initializes first");
      Register_Routine (T, Test_Method_Names'Access, "lifecycle: methods by name");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Lifecycle_Checks");
   end Name;

end Lifecycle_Tests;
