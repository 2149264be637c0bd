with AUnit.Assertions;
with Organs;
with Organs.Celtic_Cross;
with Organs.Morag.Excerpts;
with Session_Records;
with Session_Table;
with Test_Organs;
with Turn_Cycle;

package body Session_Records_Tests is

   use AUnit.Assertions;
   use type Organs.Celtic_Cross.Draw_State;
   use type Organs.Fraction;
   use type Session_Records.Decode_Status;

   Key : constant String := "u" & ASCII.US & "c" & ASCII.US & "s";

   subtype Memory is Organs.Morag.Excerpts.Excerpt_Memory;

   --  Field by field: a memory's lengths past its count are not part of it
   function Same (Left, Right : Session_Table.Session;
                  Left_Memory, Right_Memory : Memory) return Boolean is
     (Left.Turns = Right.Turns
      and then Left.Reservoir.Level = Right.Reservoir.Level
      and then Left.Reservoir.Held = Right.Reservoir.Held
      and then Left.Draws = Right.Draws
      and then Left_Memory.Count = Right_Memory.Count
      and then (for all Index in 1 .. Left_Memory.Count =>
                  Left_Memory.Excerpt (Index) = Right_Memory.Excerpt (Index)
                  and then Left_Memory.Turn_Of (Index)
                           = Right_Memory.Turn_Of (Index)));

   procedure Assert_Round_Trip
     (State : Session_Table.Session; Held : Memory; What : String)
   is
      Bytes     : constant String := Session_Records.Encoded (State, Held);
      Read      : Session_Table.Session;
      Read_Held : Memory;
      Status    : Session_Records.Decode_Status;
   begin
      Session_Records.Decode (Bytes, Read, Read_Held, Status);
      Assert (Status = Session_Records.Decoded, What & ": decodes");
      Assert (Same (Read, State, Read_Held, Held),
              What & ": decodes to the session encoded");
      Assert (Session_Records.Encoded (Read, Read_Held) = Bytes,
              What & ": encodes again to the same bytes");
   end Assert_Round_Trip;

   function Status_Of (Bytes : String) return Session_Records.Decode_Status is
      Read   : Session_Table.Session;
      Held   : Memory;
      Status : Session_Records.Decode_Status;
   begin
      Session_Records.Decode (Bytes, Read, Held, Status);
      if Status /= Session_Records.Decoded then
         Assert (Read.Turns = 0 and then Held.Count = 0,
                 "a record that does not decode leaves an empty session");
      end if;
      return Status;
   end Status_Of;

   --  Sessions the cycle made, turn after turn: energy spent, draws moved,
   --  recall kept up to its depth, in one- and two-byte characters
   procedure Test_Sessions_The_Cycle_Made_Round_Trip
     (T : in out AUnit.Test_Cases.Test_Case'Class)
   is
      pragma Unreferenced (T);
      State : Session_Table.Session :=
        Session_Table.Fresh (Test_Organs.Stub_Set, Key);
      Held  : Memory;
      Trace : Turn_Cycle.Turn_Trace;
   begin
      Assert_Round_Trip (State, Held, "a fresh session");
      for Turn in 1 .. 24 loop
         Turn_Cycle.Run
           (Test_Organs.Stub_Set, Test_Organs.Stub_Curve, State, Held, "u", "c", "s",
            "remember the door" & Turn'Image & " "
            & (if Turn mod 3 = 0 then "Größe " else "") & [1 .. Turn * 50 => 'x'],
            Trace);
         Assert_Round_Trip (State, Held, "after turn" & Turn'Image);
      end loop;
      Assert (Held.Count > 1, "the turns left recall");
      Assert (Held.Turn_Of (Held.Count) = 24, "the newest excerpt is the last turn's");
   end Test_Sessions_The_Cycle_Made_Round_Trip;

   procedure Test_The_Widest_Session_Round_Trips
     (T : in out AUnit.Test_Cases.Test_Case'Class)
   is
      pragma Unreferenced (T);
      State : Session_Table.Session :=
        (Turns     => Natural'Last,
         Reservoir => (Level => 1.0, Held => True, Log => <>),
         Draws     => Organs.Celtic_Cross.Draw_State'Last);
      Held  : Memory;
   begin
      for Index in 1 .. Organs.Morag.Max_Depth loop
         Held.Keep
           (Natural'Last - Organs.Morag.Max_Depth + Index,
            [1 .. Organs.Morag.Max_Recall_Bytes =>
               Character'Val (Index * 7 mod 128)],
            Organs.Morag.Max_Depth);
      end loop;
      Assert_Round_Trip (State, Held, "every field at its bound");
      State.Reservoir := (Level => 0.0, Held => False, Log => <>);
      State.Turns := 0;
      State.Draws := 0;
      Assert_Round_Trip (State, Organs.Morag.Excerpts.Empty, "every number at zero");
   end Test_The_Widest_Session_Round_Trips;

   --  Every cut and every extension of a valid record, a foreign version,
   --  and each field pushed past its range: a status, never an exception
   procedure Test_Damaged_Records_Are_Refused
     (T : in out AUnit.Test_Cases.Test_Case'Class)
   is
      pragma Unreferenced (T);
      State : Session_Table.Session :=
        Session_Table.Fresh (Test_Organs.Stub_Set, Key);
      Held  : Memory;
      Trace : Turn_Cycle.Turn_Trace;
   begin
      for Turn in 1 .. 3 loop
         Turn_Cycle.Run
           (Test_Organs.Stub_Set, Test_Organs.Stub_Curve, State, Held, "u", "c", "s",
            "hello" & Turn'Image, Trace);
      end loop;
      declare
         Bytes : constant String := Session_Records.Encoded (State, Held);

         function With_Byte (At_Offset : Natural; Value : Natural) return String
         is
            Changed : String := Bytes;
         begin
            Changed (Changed'First + At_Offset) := Character'Val (Value);
            return Changed;
         end With_Byte;
      begin
         Assert (Status_Of ("") = Session_Records.Malformed, "empty");
         for Last in Bytes'First .. Bytes'Last - 1 loop
            Assert (Status_Of (Bytes (Bytes'First .. Last))
                    = Session_Records.Malformed,
                    "cut to" & Natural'Image (Last - Bytes'First + 1) & " bytes");
         end loop;
         Assert (Status_Of (Bytes & ASCII.NUL) = Session_Records.Malformed,
                 "a byte past the end");
         for Version in 0 .. 255 loop
            if Version /= Session_Records.Format_Version then
               Assert (Status_Of (With_Byte (0, Version))
                       = Session_Records.Other_Version,
                       "version" & Version'Image);
            end if;
         end loop;
         Assert (Status_Of (With_Byte (4, 16#80#)) = Session_Records.Malformed,
                 "more turns than Natural holds");
         Assert (Status_Of (With_Byte (6, 4)) = Session_Records.Malformed,
                 "an energy level past 1.0");
         Assert (Status_Of (With_Byte (7, 2)) = Session_Records.Malformed,
                 "held neither 0 nor 1");
         Assert (Status_Of (With_Byte (16, Organs.Morag.Max_Depth + 1))
                 = Session_Records.Malformed, "more excerpts than kept");
         Assert (Status_Of (With_Byte (1, 2)) = Session_Records.Malformed,
                 "more excerpts than the session has had turns");
         Assert (Status_Of (With_Byte (18, 16#05#)) = Session_Records.Malformed,
                 "an excerpt longer than recall's bound");
         Assert (Status_Of (With_Byte (Session_Records.Fixed_Bytes + 2, 16#FF#))
                 = Session_Records.Not_Utf8, "an excerpt that is not UTF-8");
         Assert (Status_Of (Bytes) = Session_Records.Decoded,
                 "the record itself still decodes");
      end;
   end Test_Damaged_Records_Are_Refused;

   --  A record at the last turn number (one Encoded writes and Decode
   --  reads): its next turns run, and stay at that number
   procedure Test_A_Session_At_The_Last_Turn_Stays_There
     (T : in out AUnit.Test_Cases.Test_Case'Class)
   is
      pragma Unreferenced (T);
      State : Session_Table.Session :=
        Session_Table.Fresh (Test_Organs.Stub_Set, Key);
      Held  : Memory;
      Trace : Turn_Cycle.Turn_Trace;
   begin
      State.Turns := Natural'Last - 1;
      for Turn in 1 .. 2 loop
         Turn_Cycle.Run
           (Test_Organs.Stub_Set, Test_Organs.Stub_Curve, State, Held, "u", "c", "s",
            "hello" & Turn'Image, Trace);
         Assert (Trace.Turn = Natural'Last and then State.Turns = Natural'Last,
                 "turn" & Turn'Image & " is numbered" & Trace.Turn'Image);
      end loop;
      Assert (Held.Count = 1 and then Held.Excerpt (1) = "hello 1",
              "the memory keeps the last turn's first excerpt, numbered alike");
      Assert (Status_Of (Session_Records.Encoded (State, Held)) = Session_Records.Decoded,
              "the record at the last turn decodes");
   end Test_A_Session_At_The_Last_Turn_Stays_There;

   overriding procedure Register_Tests (T : in out Test) is
      use AUnit.Test_Cases.Registration;
   begin
      Register_Routine (T, Test_Sessions_The_Cycle_Made_Round_Trip'Access,
                        "sessions the cycle made decode to themselves");
      Register_Routine (T, Test_The_Widest_Session_Round_Trips'Access,
                        "a session at every bound decodes to itself");
      Register_Routine (T, Test_Damaged_Records_Are_Refused'Access,
                        "damaged or foreign records are a status, never a crash");
      Register_Routine (T, Test_A_Session_At_The_Last_Turn_Stays_There'Access,
                        "a session at the last turn number stays there");
   end Register_Tests;

   overriding function Name (T : Test) return AUnit.Message_String is
      pragma Unreferenced (T);
   begin
      return AUnit.Format ("Session_Records");
   end Name;

end Session_Records_Tests;
