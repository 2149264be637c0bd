--  Runs every AUnit suite of the body and prints the closing line CI reads:
--  "N passed, N failed" (AUnit's own summary is not one CI recognises).

with Ada.Command_Line;
with Ada.Text_IO;
with AUnit.Reporter.Text;
with AUnit.Run;
with AUnit.Test_Results;
with Body_Suites;

procedure Run_Ada_Tests is
   procedure Run is new AUnit.Run.Test_Runner_With_Results (Body_Suites.All_Tests);
   Reporter : AUnit.Reporter.Text.Text_Reporter;
   Results  : AUnit.Test_Results.Result;
   Passed   : Natural;
   Failed   : Natural;
begin
   Run (Reporter, Results);
   Passed := Natural (AUnit.Test_Results.Success_Count (Results));
   Failed := Natural (AUnit.Test_Results.Failure_Count (Results))
     + Natural (AUnit.Test_Results.Error_Count (Results));
   Ada.Text_IO.Put_Line
     ("ada:" & Passed'Image & " passed," & Failed'Image & " failed");
   if Failed > 0 then
      Ada.Command_Line.Set_Exit_Status (Ada.Command_Line.Failure);
   end if;
end Run_Ada_Tests;
