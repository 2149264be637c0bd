with Ada.Strings.Fixed;
with Ada.Strings.Unbounded;
with AUnit.Assertions;
with Organs.Morag.Excerpts;
with Store_Files;
with Session_Store;
with Session_Table;
with Test_Organs;

package body Session_Store_Tests is

   use AUnit.Assertions;

   Path : constant String := "tests/ada/obj/session-store-test.db";
   --  Beside the test objects (the tests run from the checkout's root)

   Key : constant String := "u" & ASCII.US & "c" & ASCII.US & "s";

   procedure Remove_Store is
   begin
      Store_Files.Remove (Path);
   end Remove_Store;

   procedure Open
     (Store : in out Session_Store.Store; Capacity : Positive := 10)
   is
      Opened : Session_Store.Outcome;
   begin
      Store.Open (Path, Capacity => Capacity, Busy_Timeout_Ms => 20,
                  Full_Sync => False, Result => Opened);
      Assert (not Opened.Failed, "the store opens");
   end Open;

   --  Two stores on one file, as two bodies: a turn open in one holds the
   --  other off; abandoning it (a turn that raised) lets the other in at
   --  once, and what either commits is what the other reads next
   procedure Test_An_Abandoned_Turn_Releases_The_Store
     (T : in out AUnit.Test_Cases.Test_Case'Class)
   is
      pragma Unreferenced (T);
      First, Second : Session_Store.Store;
      State         : Session_Table.Session;
      Memory        : Organs.Morag.Excerpts.Excerpt_Memory;
      Result        : Session_Store.Outcome;
   begin
      Remove_Store;
      Open (First);
      Open (Second);

      First.Begin_Turn (Test_Organs.Stub_Set, Key, State, Memory, Result);
      Assert (not Result.Failed and then State.Turns = 0, "a new session");
      Second.Begin_Turn (Test_Organs.Stub_Set, Key, State, Memory, Result);
      Assert (Result.Failed, "a turn open in one store holds the other off");

      First.Abandon_Turn;
      Second.Begin_Turn (Test_Organs.Stub_Set, Key, State, Memory, Result);
      Assert (not Result.Failed, "an abandoned turn lets the other store in");
      Assert (State.Turns = 0, "the abandoned turn never happened");
      State.Turns := 41;
      Second.Commit_Turn (Key, State, Memory, Result);
      Assert (not Result.Failed, "the other store commits");

      First.Begin_Turn (Test_Organs.Stub_Set, Key, State, Memory, Result);
      Assert (not Result.Failed and then State.Turns = 41,
              "a turn reads the latest committed record, whoever wrote it");
      First.Abandon_Turn;
      First.Abandon_Turn;
      --  Twice, or with no turn open: nothing to undo
      First.Close;
      Second.Close;
      Remove_Store;
   end Test_An_Abandoned_Turn_Releases_The_Store;

   --  One committed turn of Session: its counter one more
   procedure Take_Turn (Store : in out Session_Store.Store; Session : String) is
      State  : Session_Table.Session;
      Memory : Organs.Morag.Excerpts.Excerpt_Memory;
      Result : Session_Store.Outcome;
   begin
      Store.Begin_Turn (Test_Organs.Stub_Set, Session, State, Memory, Result);
      Assert (not Result.Failed, "a turn begins");
      State.Turns := State.Turns + 1;
      Store.Commit_Turn (Session, State, Memory, Result);
      Assert (not Result.Failed, "a turn commits");
   end Take_Turn;

   --  The turns the store keeps for Session (0: none), read in a
   --  turn that is then abandoned, so that reading changes nothing
   function Kept_Turns
     (Store : in out Session_Store.Store; Session : String) return Natural
   is
      State  : Session_Table.Session;
      Memory : Organs.Morag.Excerpts.Excerpt_Memory;
      Result : Session_Store.Outcome;
   begin
      Store.Begin_Turn (Test_Organs.Stub_Set, Session, State, Memory, Result);
      Assert (not Result.Failed, "a turn begins");
      Store.Abandon_Turn;
      return State.Turns;
   end Kept_Turns;

   --  A session's turns while it is already the most recently used leave
   --  its rank as it is (one page written): the order of use, and so what
   --  the cap evicts, is the one every turn re-ranking would give
   procedure Test_Eviction_Follows_The_Order_Of_Use
     (T : in out AUnit.Test_Cases.Test_Case'Class)
   is
      pragma Unreferenced (T);
      A : constant String := "a" & Key;
      B : constant String := "b" & Key;
      C : constant String := "c" & Key;
      Store : Session_Store.Store;
   begin
      Remove_Store;
      Open (Store, Capacity => 2);
      Take_Turn (Store, A);
      Take_Turn (Store, B);
      Take_Turn (Store, B);
      Take_Turn (Store, B);
      Take_Turn (Store, C);
      Assert (Kept_Turns (Store, A) = 0, "a, used before b, is evicted");
      Assert (Kept_Turns (Store, B) = 3 and then Kept_Turns (Store, C) = 1,
              "b and c are kept");
      Store.Close;
      Remove_Store;

      Open (Store, Capacity => 2);
      Take_Turn (Store, A);
      Take_Turn (Store, A);
      Take_Turn (Store, B);
      Take_Turn (Store, A);
      Take_Turn (Store, A);
      Take_Turn (Store, C);
      Assert (Kept_Turns (Store, B) = 0,
              "b, used after a's first turns but before its last, is evicted");
      Assert (Kept_Turns (Store, A) = 4 and then Kept_Turns (Store, C) = 1,
              "a and c are kept");
      Store.Close;
      Remove_Store;
   end Test_Eviction_Follows_The_Order_Of_Use;

   --  A long turn holds no lock while it runs: another store's turns go
   --  on meanwhile.  It commits over the record it read, and only over
   --  it; its rank of use is taken when it commits, so what it used last
   --  is what the cap keeps
   procedure Test_A_Long_Turn_Commits_Only_Over_The_Record_It_Read
     (T : in out AUnit.Test_Cases.Test_Case'Class)
   is
      pragma Unreferenced (T);
      A : constant String := "a" & Key;
      B : constant String := "b" & Key;
      C : constant String := "c" & Key;
      Long, Other : Session_Store.Store;
      State       : Session_Table.Session;
      Memory      : Organs.Morag.Excerpts.Excerpt_Memory;
      Result      : Session_Store.Outcome;

      function Says (Part : String) return Boolean is
        (Ada.Strings.Fixed.Index
           (Ada.Strings.Unbounded.To_String (Result.Reason), Part) > 0);
   begin
      Remove_Store;
      Open (Long, Capacity => 2);
      Open (Other, Capacity => 2);

      Long.Begin_Long_Turn (Test_Organs.Stub_Set, A, State, Memory, Result);
      Assert (not Result.Failed and then State.Turns = 0, "a new session");
      Take_Turn (Other, A);
      State.Turns := 1;
      Long.Commit_Long_Turn (A, State, Memory, Result);
      Assert (Result.Failed and then Says ("changed in another body"),
              "a session made meanwhile fails the long turn");
      Assert (Kept_Turns (Other, A) = 1, "the other store's turn is kept");

      Long.Begin_Long_Turn (Test_Organs.Stub_Set, A, State, Memory, Result);
      Assert (not Result.Failed and then State.Turns = 1, "read again");
      Take_Turn (Other, A);
      State.Turns := 2;
      Long.Commit_Long_Turn (A, State, Memory, Result);
      Assert (Result.Failed and then Kept_Turns (Other, A) = 2,
              "a session turned meanwhile fails the long turn");

      Long.Begin_Long_Turn (Test_Organs.Stub_Set, A, State, Memory, Result);
      Take_Turn (Other, B);
      --  b is now the most recently used, a the least
      State.Turns := State.Turns + 1;
      Long.Commit_Long_Turn (A, State, Memory, Result);
      Assert (not Result.Failed, "another session's turn is no conflict");
      Take_Turn (Other, C);
      Assert (Kept_Turns (Other, B) = 0,
              "b, used before the long turn of a committed, is evicted");
      Assert (Kept_Turns (Long, A) = 3 and then Kept_Turns (Long, C) = 1,
              "a and c are kept");
      Long.Close;
      Other.Close;
      Remove_Store;
   end Test_A_Long_Turn_Commits_Only_Over_The_Record_It_Read;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_An_Abandoned_Turn_Releases_The_Store'Access,
                        "an abandoned turn releases the store to other bodies");
      Register_Routine (T, Test_Eviction_Follows_The_Order_Of_Use'Access,
                        "eviction follows the order of use");
      Register_Routine
        (T, Test_A_Long_Turn_Commits_Only_Over_The_Record_It_Read'Access,
         "a long turn commits only over the record it read");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Session_Store");
   end Name;

end Session_Store_Tests;
